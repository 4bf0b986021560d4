// Must NOT type-check (tests/test_bindings.py expects tsc to name the wrong field): an action
// of the notes feature with a misspelt field.
import { spawn } from '../src/index.js';

export async function wrong(): Promise<void> {
  const client = spawn();
  await client.dispatch('notes', { type: 'add', txt: 'Heron' });
}
