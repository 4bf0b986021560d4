// Type-checked by tests/test_bindings.py (`tsc --noEmit --strict`): what the typed bindings
// accept, and, under `@ts-expect-error`, what they must refuse (an unused directive fails).
import { Mirror, spawn } from '../src/index.js';
import type { NotesState, NavigationAction, UsersState } from '../src/index.js';

export async function typed(): Promise<number> {
  const client = spawn({ args: ['--ephemeral'] });
  await client.dispatch('notes', { type: 'add', text: 'Heron' });
  await client.dispatch('notes', { type: 'resolveConflict', id: 'note-1', keep: 'server' });
  await client.dispatch('cart', { type: 'add', id: 'tea', name: 'Tea', price: 450 });
  const push: NavigationAction = {
    type: 'push', destination: { screen: 'userDetail', userId: 42 },
  };
  await client.dispatch('navigation', push);
  await client.dispatch('navigation', { type: 'openURL', url: 'app://users/3' });
  // A store that names no feature takes any action.
  await client.dispatch('scratch', { type: 'anything', at: 1 });

  // @ts-expect-error: `txt` is no field of `add`
  await client.dispatch('notes', { type: 'add', txt: 'Heron' });
  // @ts-expect-error: `keep` is local or server
  await client.dispatch('notes', { type: 'resolveConflict', id: 'note-1', keep: 'mine' });
  // @ts-expect-error: `strat` is no action of counter
  await client.dispatch('counter', { type: 'strat' });
  // @ts-expect-error: settings takes no userId
  await client.dispatch('navigation', { type: 'push', destination: { screen: 'settings', userId: 1 } });

  const notes = await Mirror.open(client, 'notes');
  const state: NotesState | undefined = notes.state;
  // Optional versus null as on the wire: the key is there, the value may be null.
  const serverText: string | null = state?.notes[0]?.serverText ?? null;
  // @ts-expect-error: serverText may be null, never undefined
  const missing: string | undefined = state?.notes[0]?.serverText;
  const users = await Mirror.open(client, 'users', {
    onChange: (users: UsersState) => users.selected?.email,
  });
  await client.shutdown();
  return (serverText?.length ?? 0) + (missing?.length ?? 0) + (users.state?.users.length ?? 0);
}
