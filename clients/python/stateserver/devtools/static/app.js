// The devtools page: live stores, a timeline of actions with their effects and events,
// details of one action (diff, state tree, rewind, skip, fork, blame from a value), a dispatch
// form from the feature's schema, and recordings out (export) and in (the replay check, and a
// timeline to step through). All state lives in `model`; the page keeps at most `model.keep`
// entries and renders at most once per frame.
import { validate, inputKind } from './schema.js';
import { tree } from './tree.js';
import { diff } from './diff.js';
import { applyPatch } from './patch.js';

const $ = (selector) => document.querySelector(selector);
const SHOWN = 200; // rows in the timeline at once (the newest that pass the filters)
const RENDER_EVERY_MS = 250; // under a flood, at most four renders a second keep the page usable

const model = {
  stores: new Map(), // id -> {store, feature, version}
  features: new Map(), // name -> {name, actions, schema}
  entries: [], // oldest first, at most `keep`
  byKey: new Map(), // "store#seq" -> entry
  events: [],
  keep: 2000,
  // Entries not kept: before this page connected (`before`), pushed out by newer ones here
  // (`pushedOut`), or never read because a store ran a whole page ahead of a poll (`skipped`).
  before: 0,
  pushedOut: 0,
  skipped: 0,
  lost: 0, // updates the devtools server could not queue for this page (it read too slowly)
  selected: null,
};

const key = (entry) => `${entry.store}#${entry.seq}`;

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'class') node.className = value;
    else if (name.startsWith('data-')) node.setAttribute(name, value);
    else node[name] = value;
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

async function call(path, body) {
  const response = await fetch(path, body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return response.json();
}

// Live updates

function connect() {
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${location.pathname}ws`);
  socket.onopen = () => { $('#status').textContent = 'live'; $('#status').className = 'status live'; };
  socket.onclose = () => {
    $('#status').textContent = 'disconnected: reload when the core runs again';
    $('#status').className = 'status down';
  };
  socket.onmessage = (message) => receive(JSON.parse(message.data));
}

function receive(message) {
  switch (message.type) {
    case 'snapshot':
      model.keep = message.keep;
      model.before = message.pushedOut;
      model.skipped = message.skipped;
      model.features = new Map(message.features.map((feature) => [feature.name, feature]));
      setStores(message.stores);
      addEntries(message.entries);
      document.body.dataset.recording = message.recording ? 'yes' : 'no';
      fillDispatchStores();
      break;
    case 'stores': setStores(message.stores); break;
    case 'entries':
      model.skipped = message.skipped;
      addEntries(message.entries);
      break;
    case 'error': $('#status').textContent = `core: ${message.message}`; break;
    case 'lost': model.lost = message.updates; break;
    default: break;
  }
  schedule();
}

function setStores(stores) {
  const known = [...model.stores.keys()].join();
  model.stores = new Map(stores.map((store) => [store.store, store]));
  if (known !== [...model.stores.keys()].join()) {
    fillDispatchStores();
    const filter = $('#filter-store');
    const chosen = filter.value;
    filter.replaceChildren(element('option', { value: '', textContent: 'all' }),
      ...[...model.stores.keys()].map((id) => element('option', { value: id, textContent: id })));
    filter.value = chosen;
  }
}

function addEntries(entries) {
  let added = 0;
  for (const entry of entries) {
    const old = model.byKey.get(key(entry));
    if (old) { Object.assign(old, entry); continue; } // its effects ended: spans get their end
    model.entries.push(entry);
    added += 1;
    model.byKey.set(key(entry), entry);
    for (const event of entry.events || []) model.events.push({ store: entry.store, seq: entry.seq, event });
  }
  // Each store's entries come in order, store by store: the timeline is one order, by time.
  // A batch newer than everything held (the usual case) needs no sort.
  let ordered = true;
  for (let i = Math.max(1, model.entries.length - added); i < model.entries.length && ordered; i += 1) {
    ordered = model.entries[i - 1].at <= model.entries[i].at;
  }
  if (!ordered) model.entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.store < b.store ? -1 : a.store > b.store ? 1 : a.seq - b.seq));
  const over = model.entries.length - model.keep;
  if (over > 0) {
    for (const entry of model.entries.splice(0, over)) model.byKey.delete(key(entry));
    model.pushedOut += over;
  }
  if (model.events.length > model.keep) model.events.splice(0, model.events.length - model.keep);
}

// Rendering, at most once per frame

let pending = false;
let rendered = 0;
function schedule() {
  if (pending) return;
  pending = true;
  const wait = Math.max(0, rendered + RENDER_EVERY_MS - performance.now());
  setTimeout(() => requestAnimationFrame(() => {
    pending = false;
    rendered = performance.now();
    render();
  }), wait);
}

function kindOf(entry) {
  if (entry.kind !== 'action') return entry.kind;
  const feature = model.features.get(model.stores.get(entry.store)?.feature);
  const type = entry.action?.type;
  return feature && feature.actions.includes(type) && entry.origin?.action === undefined ? 'public' : 'internal';
}

function originText(origin) {
  if (!origin) return '';
  if (origin.action !== undefined) return `effect of #${origin.action}`;
  if (origin.request !== undefined) return `request ${JSON.stringify(origin.request)}`;
  return 'server';
}

const ms = (us) => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us} µs`);

function render() {
  const tbody = $('#stores tbody');
  tbody.replaceChildren(...[...model.stores.values()].map((store) => element('tr', { 'data-store': store.store },
    element('td', { textContent: store.store }), element('td', { textContent: store.feature }),
    element('td', { class: 'version', textContent: String(store.version) }))));

  const storeFilter = $('#filter-store').value;
  const typeFilter = $('#filter-type').value.trim().toLowerCase();
  const kindFilter = $('#filter-kind').value;
  const rows = [];
  let matching = 0;
  for (let i = model.entries.length - 1; i >= 0; i -= 1) {
    const entry = model.entries[i];
    const kind = kindOf(entry);
    if (storeFilter && entry.store !== storeFilter) continue;
    if (typeFilter && !String(entry.action?.type ?? entry.kind).toLowerCase().includes(typeFilter)) continue;
    if (kindFilter && kind !== kindFilter) continue;
    matching += 1;
    if (rows.length < SHOWN) rows.push(row(entry, kind));
  }
  $('#timeline tbody').replaceChildren(...rows);
  $('#count').textContent = `${matching} of ${model.entries.length} entries${matching > SHOWN ? `, newest ${SHOWN} shown` : ''}`;
  const notice = $('#notice');
  const dropped = model.before + model.pushedOut + model.skipped;
  notice.hidden = dropped === 0 && !model.lost;
  notice.textContent = `keeping the last ${model.keep} entries: ${dropped} older not kept`
    + (model.lost ? `; this page fell behind and missed ${model.lost} updates (reload to catch up)` : '');
  $('#events').replaceChildren(...model.events.slice(-50).reverse().map((item) =>
    element('li', { textContent: `${item.store} #${item.seq} ${JSON.stringify(item.event)}` })));
}

function row(entry, kind) {
  const selected = model.selected && key(model.selected) === key(entry);
  const spans = (entry.effects || []).map((effect) => element('span', {
    class: `span ${effect.status}`,
    title: `effect ${effect.effect} (${effect.kind}) ${effect.status}, ${ms(effect.durationUs)}`,
    textContent: `${effect.kind} ${effect.status}${effect.status === 'running' ? '' : ` ${ms(effect.durationUs)}`}`,
  }));
  const tr = element('tr', { class: `${kind}${selected ? ' selected' : ''}${entry.skipped ? ' skipped' : ''}`, 'data-key': key(entry), 'data-kind': kind, 'data-skipped': entry.skipped ? 'yes' : 'no' },
    element('td', { class: 'num', textContent: String(entry.seq) }),
    element('td', { textContent: (entry.at || '').slice(11, 23) }),
    element('td', { textContent: entry.store }),
    element('td', { class: 'num', textContent: String(entry.version) }),
    element('td', { class: 'type', textContent: typeText(entry) }),
    element('td', {}, element('span', { class: `badge ${kind}`, textContent: kind })),
    element('td', { textContent: originText(entry.origin) }),
    element('td', { class: 'num', textContent: ms(entry.durationUs) }),
    element('td', {}, ...spans));
  tr.addEventListener('click', () => select(entry));
  return tr;
}

function typeText(entry) {
  if (entry.action?.type) return entry.action.type;
  if (entry.kind === 'rewind') return `rewind to ${entry.to}`;
  if (entry.kind === 'skip') return `${entry.skipped ? 'skip' : 'unskip'} #${entry.entry}`;
  return entry.kind;
}

// One action in detail

async function select(entry) {
  model.selected = entry;
  schedule();
  const panel = $('#detail');
  const rewind = element('button', { id: 'rewind', type: 'button', className: 'primary', textContent: `Rewind ${entry.store} to version ${entry.version}` });
  const result = element('div', { id: 'rewind-result', class: 'result' });
  const state = element('div', { id: 'state', class: 'tree', textContent: 'loading…' });
  const branching = branchingControls(entry);
  const blame = element('div', { id: 'blame', class: 'result' });
  panel.replaceChildren(
    element('h2', { textContent: `${entry.store} #${entry.seq} at version ${entry.version}${entry.skipped ? ' (skipped)' : ''}` }),
    element('pre', { id: 'action', textContent: JSON.stringify(entry.action, null, 1) }),
    element('h2', { textContent: 'Patch' }), diff(entry.patch),
    rewind, result, branching,
    element('h2', { textContent: `State at version ${entry.version}` }),
    element('p', { class: 'hint', textContent: 'Click a value to see which action last changed it (blame).' }),
    state, blame);
  panel.querySelector('.diff').id = 'patch';
  state.addEventListener('click', (event) => {
    const target = event.target.closest('[data-pointer]');
    if (target) showBlame(entry.store, target.dataset.pointer, blame);
  });
  rewind.addEventListener('click', async () => {
    const answer = await call('api/rewind', { store: entry.store, version: entry.version });
    result.className = `result ${answer.error ? 'error' : 'ok'}`;
    result.textContent = answer.error ? describeError(answer.error) : `${entry.store} is now at version ${answer.result.version} (the state of version ${entry.version})`;
  });
  const answer = await call(`api/state?store=${encodeURIComponent(entry.store)}&version=${entry.version}`);
  state.replaceChildren(answer.error ? element('span', { class: 'problem', textContent: describeError(answer.error) }) : tree(answer.result.state));
}

// Branching: skip or unskip the selected action, fork a store from its version, blame a value

function branchingControls(entry) {
  const box = element('div', { class: 'branching' });
  const result = element('div', { id: 'branch-result', class: 'result' });
  if (entry.kind === 'action') {
    const skip = element('button', { id: 'skip', type: 'button', textContent: entry.skipped ? 'Unskip this action' : 'Skip this action' });
    skip.addEventListener('click', async () => {
      const answer = await call('api/skip', { store: entry.store, version: entry.version, skipped: !entry.skipped });
      show(result, answer, (value) => {
        entry.skipped = !entry.skipped;
        schedule();
        return `${entry.store} is at version ${value.version}, recomputed ${entry.skipped ? 'without' : 'with'} #${entry.seq} (effects not run again)`;
      });
      skip.textContent = entry.skipped ? 'Unskip this action' : 'Skip this action';
    });
    box.append(skip);
  }
  const name = element('input', { id: 'fork-as', placeholder: 'fork id (optional)' });
  const fork = element('button', { id: 'fork', type: 'button', textContent: `Fork ${entry.store} at version ${entry.version}` });
  fork.addEventListener('click', async () => {
    const answer = await call('api/fork', { store: entry.store, version: entry.version, as: name.value.trim() || null });
    show(result, answer, (value) => `forked ${value.store} from ${value.from} at version ${value.version}`);
  });
  box.append(name, fork, result);
  return box;
}

function show(box, answer, describe) {
  box.className = `result ${answer.error ? 'error' : 'ok'}`;
  box.textContent = answer.error ? describeError(answer.error) : describe(answer.result);
}

function chainText(chain) {
  return (chain || []).map((link) => {
    if (link.seq !== undefined) {
      const effects = (link.effects || []).map((effect) => `${effect.kind} effect ${effect.effect}`).join(', ');
      return `${effects || 'an effect'} of #${link.seq} ${link.action?.type ?? ''}`.trim();
    }
    return originText(link);
  }).join(' ← ');
}

async function showBlame(store, path, box) {
  const answer = await call('api/blame', { store, path });
  box.dataset.path = path;
  if (answer.error) { show(box, answer, () => ''); return; }
  const { last, before, complete } = answer.result;
  const line = (touch) => element('li', { 'data-seq': String(touch.seq), textContent: `#${touch.seq} ${typeText(touch)} at version ${touch.version}${touch.created ? ' (created it)' : ''}: ${chainText(touch.chain)}` });
  box.className = 'result ok';
  box.replaceChildren(
    element('div', { class: 'summary', textContent: last ? `${path || '(root)'} in ${store} last changed by #${last.seq} ${typeText(last)} at version ${last.version}` : `${path || '(root)'} in ${store}: no entry held changed it` }),
    element('ol', { class: 'blame' }, ...(last ? [line(last)] : []), ...before.map(line)),
    complete ? null : element('div', { class: 'hint', textContent: 'older changes may have left the history' }));
}

function describeError(error) {
  const data = error.data || {};
  const where = data.pointer !== undefined ? ` at ${data.pointer}` : '';
  return `${error.message}${where}${data.reason ? `: ${data.reason}` : ''}`;
}

// The dispatch form, from the feature's JSON Schema (public actions only)

function fillDispatchStores() {
  const select = $('#dispatch-store');
  const chosen = select.value;
  select.replaceChildren(...[...model.stores.values()].map((store) =>
    element('option', { value: store.store, textContent: `${store.store} (${store.feature})` })));
  if (chosen && model.stores.has(chosen)) select.value = chosen;
  fillDispatchTypes();
}

function actionSchemas() {
  const feature = model.features.get(model.stores.get($('#dispatch-store').value)?.feature);
  return feature ? { names: feature.actions, schemas: feature.schema.actions } : { names: [], schemas: {} };
}

function fillDispatchTypes() {
  const select = $('#dispatch-type');
  const { names } = actionSchemas();
  const chosen = select.value;
  select.replaceChildren(...names.map((name) => element('option', { value: name, textContent: name })));
  if (names.includes(chosen)) select.value = chosen;
  fillDispatchFields();
}

function fillDispatchFields() {
  const schema = actionSchemas().schemas[$('#dispatch-type').value] || {};
  const fields = Object.entries(schema.properties || {}).filter(([name]) => name !== 'type');
  const required = schema.required || [];
  $('#dispatch-fields').replaceChildren(...fields.map(([name, field]) => {
    const kind = inputKind(field);
    let input;
    if (kind === 'choice') {
      input = element('select', {}, ...field.enum.map((value) => element('option', { value: JSON.stringify(value), textContent: String(value) })));
    } else if (kind === 'boolean') {
      input = element('input', { type: 'checkbox' });
    } else if (kind === 'json') {
      input = element('textarea', { rows: 3, placeholder: 'JSON' });
    } else {
      input = element('input', { type: kind === 'number' ? 'text' : 'text', inputMode: kind === 'number' ? 'numeric' : 'text' });
    }
    input.name = name;
    input.dataset.kind = kind;
    return element('label', {}, `${name}${required.includes(name) ? '' : ' (optional)'} `, input);
  }));
}

function readAction() {
  const action = { type: $('#dispatch-type').value };
  for (const input of $('#dispatch-fields').querySelectorAll('[name]')) {
    const kind = input.dataset.kind;
    if (kind === 'boolean') { action[input.name] = input.checked; continue; }
    const text = input.value;
    if (text === '') continue; // left out: the check says whether it may be
    if (kind === 'string') action[input.name] = text;
    else if (kind === 'number') action[input.name] = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text.trim()) ? Number(text) : text;
    else {
      try { action[input.name] = JSON.parse(text); } catch { action[input.name] = text; }
    }
  }
  return action;
}

async function submitDispatch(event) {
  event.preventDefault();
  const result = $('#dispatch-result');
  const store = $('#dispatch-store').value;
  const action = readAction();
  if ($('#dispatch-check').checked) {
    const schema = actionSchemas().schemas[action.type];
    const problems = validate(schema, action, '/action');
    if (problems.length) {
      result.className = 'result error';
      result.dataset.source = 'form';
      result.textContent = problems.map((problem) => `not sent: ${problem.pointer}: ${problem.reason}`).join('\n');
      return;
    }
  }
  const answer = await call('api/dispatch', { store, action });
  result.dataset.source = 'server';
  result.className = `result ${answer.error ? 'error' : 'ok'}`;
  result.textContent = answer.error ? `server: ${describeError(answer.error)}` : `${store} is at version ${answer.result.version}`;
}

// Recordings: export the session, import one and run the replay check

async function exportRecording() {
  const response = await fetch('api/export');
  if (!response.ok) {
    const answer = await response.json();
    showReplay('refused', answer.error.message);
    return;
  }
  const link = element('a', { href: URL.createObjectURL(await response.blob()), download: 'stateserver-session.ndjson' });
  document.body.append(link);
  link.click();
  link.remove();
}

async function importRecording(event) {
  const file = event.target.files[0];
  if (!file) return;
  showReplay('running', `replaying ${file.name}…`);
  const text = await file.text();
  loadTimeline(file.name, text);
  const response = await fetch('api/replay', { method: 'POST', body: text });
  const answer = await response.json();
  event.target.value = '';
  const outcome = answer.outcome || {};
  if (answer.status === 0) {
    showReplay('match', `${file.name}: replay matches (${outcome.entries} entries, ${outcome.stores} stores)`);
  } else if (answer.status === 1) {
    const box = showReplay('diverged', `${file.name}: diverges at store ${outcome.store}, version ${outcome.version} (line ${outcome.line}): ${outcome.reason}`);
    box.append(element('pre', { textContent: `action:   ${JSON.stringify(outcome.action)}` }),
      element('h2', { textContent: 'expected (recorded)' }), diff(outcome.expected),
      element('h2', { textContent: 'actual (replayed)' }), diff(outcome.actual));
  } else {
    showReplay('refused', `${file.name}: refused: ${answer.stderr.trim()}`);
  }
}

// An imported recording as a timeline of steps: each entry with its action, its patch and the
// view of its store after it, rebuilt from the state the store opened with and the patches.

const recording = { name: '', steps: [], at: -1 };

function loadTimeline(name, text) {
  const views = new Map();
  const steps = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    let item;
    try { item = JSON.parse(line); } catch { steps.push({ problem: `line ${index + 1} is not JSON` }); continue; }
    if (item.type === 'open') views.set(item.store, { view: item.state, broken: null });
    if (item.type !== 'entry') continue;
    const store = views.get(item.store) || { view: null, broken: 'no open line before it' };
    if (!store.broken) {
      try { store.view = applyPatch(store.view, item.patch || []); } catch (error) {
        store.broken = `its patch does not apply to the opened state (${error.message}): the feature's view differs from its state`;
      }
    }
    views.set(item.store, store);
    steps.push({ line: index + 1, entry: item, view: store.view, broken: store.broken });
  }
  Object.assign(recording, { name, steps, at: steps.length ? 0 : -1 });
  renderStep();
}

function renderStep() {
  const box = $('#recording');
  box.hidden = false;
  const step = recording.steps[recording.at];
  const prev = element('button', { id: 'step-prev', type: 'button', textContent: '◀ previous', disabled: recording.at <= 0 });
  const next = element('button', { id: 'step-next', type: 'button', textContent: 'next ▶', disabled: recording.at >= recording.steps.length - 1 });
  const slider = element('input', { id: 'step-slider', type: 'range', min: 0, max: Math.max(0, recording.steps.length - 1), value: Math.max(0, recording.at) });
  prev.addEventListener('click', () => { recording.at -= 1; renderStep(); });
  next.addEventListener('click', () => { recording.at += 1; renderStep(); });
  slider.addEventListener('input', () => { recording.at = Number(slider.value); renderStep(); });
  const label = element('span', { id: 'step-label', textContent: step ? `step ${recording.at + 1} of ${recording.steps.length}: ${step.entry ? `${step.entry.store} #${step.entry.seq} → version ${step.entry.version}` : step.problem}` : `${recording.name}: no entries` });
  const parts = [element('h2', { textContent: `Recording ${recording.name}` }), element('div', { class: 'stepper' }, prev, slider, next, label)];
  if (step?.entry) {
    const entry = step.entry;
    parts.push(
      element('pre', { id: 'step-action', textContent: `${typeText(entry)}  (${originText(entry.origin)})\n${JSON.stringify(entry.action, null, 1)}` }),
      element('h2', { textContent: 'Patch' }), Object.assign(diff(entry.patch || []), { id: 'step-patch' }),
      element('h2', { textContent: `State of ${entry.store} at version ${entry.version}` }),
      step.broken ? element('div', { id: 'step-state', class: 'problem', textContent: step.broken }) : Object.assign(tree(step.view), { id: 'step-state' }));
  }
  box.replaceChildren(...parts);
}

function showReplay(kind, text) {
  const box = $('#replay');
  box.hidden = false;
  box.className = `replay ${kind}`;
  box.dataset.outcome = kind;
  box.replaceChildren(element('div', { class: 'summary', textContent: text }));
  return box;
}

$('#dispatch-store').addEventListener('change', fillDispatchTypes);
$('#dispatch-type').addEventListener('change', fillDispatchFields);
$('#dispatch').addEventListener('submit', submitDispatch);
for (const id of ['#filter-store', '#filter-type', '#filter-kind']) {
  $(id).addEventListener('input', schedule);
  $(id).addEventListener('change', schedule);
}
$('#export').addEventListener('click', exportRecording);
$('#import').addEventListener('change', importRecording);
connect();
