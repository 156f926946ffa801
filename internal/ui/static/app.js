// The redcheck UI: threads (paged, searchable, filtered), a thread's live
// timeline and branch tree, a checkpoint's state, diffs, the interrupt
// inbox, and (with --allow-writes) fork, prune and delete. Plain DOM, no
// build step; the server's event stream (api/events) keeps it current.
'use strict';

// A mark of this page load: a test reads it to tell that no reload happened.
window.redcheckLoadID = Date.now() + '-' + Math.random().toString(36).slice(2);

const $ = (sel) => document.querySelector(sel);
const enc = encodeURIComponent;

const st = {
  status: null,       // /api/status
  threads: new Map(), // thread id -> its latest checkpoint row (shown in the list)
  nextThreads: '',    // ?before= of the next page of threads
  selected: null,     // the selected thread's id
  rows: new Map(),    // ns + "\0" + id -> timeline element, selected thread only
  data: new Map(),    // ns + "\0" + id -> checkpoint row, selected thread only
  older: '',          // ?before= of the next older page of the timeline
  gen: 0,             // bumped when the timeline is cleared: late pages are dropped
  threadsGen: 0,      // bumped when the thread list is reset: late pages are dropped
  shown: null,        // {ns, id} of the checkpoint in the state panel
  ready: null,        // resolves once the event stream is live
  inbox: new Map(),   // thread id -> inbox item
};
const rowKey = (ns, id) => ns + '\u0000' + id;
const INTERRUPT = '__interrupt__';

// el builds an element: attrs may hold class, text, title, data (dataset)
// and any other attribute by name.
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = String(v);
    else if (k === 'data') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  e.append(...children);
  return e;
}

// ApiError carries the kind of an API error body.
class ApiError extends Error {
  constructor(status, body) {
    super(body.error || ('HTTP ' + status));
    this.status = status;
    this.kind = body.kind || 'error';
  }
}

async function api(path, init) {
  const r = await fetch(path, init);
  let body;
  try { body = await r.json(); } catch { body = { error: r.status + ' ' + r.statusText } }
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

// write sends a confirmed write.
function write(method, path, body) {
  const init = { method, headers: { 'X-Redcheck-Confirm': 'yes' } };
  if (body !== undefined) { init.body = JSON.stringify(body); init.headers['Content-Type'] = 'application/json'; }
  return api(path, init);
}

const MESSAGES = {
  unreachable: 'Cannot reach Redis. Retrying…',
  no_data: 'No redcheck data under this prefix: check --prefix (and --url, the database number). Retrying…',
  config: 'The prefix does not match the options: check --shards. Retrying…',
  data_loss: 'Data loss: Redis lost keys this data needs (eviction, a restart without persistence, a flush). Run "redcheck check".',
  decrypt: 'Cannot decrypt: these values are encrypted and the keyring does not open them (start the UI with --key, or with the key that wrote them).',
  forbidden: 'Refused.',
};

// showError puts an error in the banner, with what its kind means.
function showError(e) {
  const b = $('#banner');
  const kind = e.kind || 'error';
  b.dataset.kind = kind;
  b.textContent = (MESSAGES[kind] ? MESSAGES[kind] + ' ' : '') + (e.message || String(e));
  b.hidden = false;
}
function clearError() { $('#banner').hidden = true; }

function fmtTime(ts) {
  const d = new Date(String(ts || '').replace(/(\.\d{3})\d+/, '$1'));
  return isNaN(d) ? (ts || '') : d.toLocaleTimeString();
}
function fmtDateTime(ts) {
  const d = new Date(String(ts || '').replace(/(\.\d{3})\d+/, '$1'));
  return isNaN(d) ? (ts || '–') : d.toLocaleString();
}
function ago(ts) {
  const d = new Date(String(ts || '').replace(/(\.\d{3})\d+/, '$1'));
  if (isNaN(d)) return '';
  const s = Math.max(0, Math.round((Date.now() - d) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 172800) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' days ago';
}
const shortID = (id) => '…' + String(id).slice(-6);

// shortVersion shows "000000000003.9f86d081" as "v3".
function shortVersion(v) {
  const m = /^0*(\d+)\./.exec(v || '');
  return m ? 'v' + m[1] : (v || '–');
}

function note(text) { $('#timeline-note').textContent = text; }

// ---- tabs and keyboard ----

function tabs(ids) {
  const set = (which) => {
    for (const id of ids) {
      const t = $('#' + id);
      t.setAttribute('aria-selected', String(id === which));
      t.tabIndex = id === which ? 0 : -1;
      $('#' + t.getAttribute('aria-controls')).hidden = id !== which;
    }
  };
  for (const id of ids) {
    const t = $('#' + id);
    t.onclick = () => set(id);
    t.onkeydown = (e) => {
      const i = ids.indexOf(id);
      const j = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : -2;
      if (j === -2) return;
      const next = ids[(j + ids.length) % ids.length];
      set(next);
      $('#' + next).focus();
    };
  }
  set(ids[0]);
  return set;
}

// arrowKeys moves the focus between the focusable items of a list with
// the arrow keys (Home and End too).
function arrowKeys(container, selector) {
  container.addEventListener('keydown', (e) => {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
    const items = [...container.querySelectorAll(selector)];
    const i = items.indexOf(document.activeElement);
    if (i < 0) return;
    const j = e.key === 'Home' ? 0 : e.key === 'End' ? items.length - 1 : e.key === 'ArrowDown' ? Math.min(i + 1, items.length - 1) : Math.max(i - 1, 0);
    items[j].focus();
    e.preventDefault();
  });
}

// ---- status ----

async function loadStatus() {
  try {
    st.status = await api('api/status');
  } catch (e) {
    st.status = { ok: false, kind: 'unreachable', error: 'the redcheck ui server does not answer: ' + e.message };
  }
  const s = st.status;
  $('#prefix-label').textContent = s.prefix !== undefined ? `prefix "${s.prefix}" · ${s.shards} shards` : '';
  const mode = $('#mode');
  mode.dataset.writes = String(!!s.allow_writes);
  mode.textContent = s.allow_writes ? 'writes allowed' : 'read-only';
  for (const b of document.querySelectorAll('.write')) b.hidden = !s.allow_writes;
  if (!s.ok) showError({ kind: s.kind, message: s.error });
  else clearError();
  return s.ok;
}

// ---- the event stream ----

function connect() {
  let live;
  st.ready = new Promise((resolve) => { live = resolve; });
  const es = new EventSource('api/events');
  const status = (s, text) => { const e = $('#conn-status'); e.dataset.state = s; e.textContent = text; };
  es.addEventListener('ready', () => { status('live', 'live'); live(); });
  es.onmessage = (m) => onEvent(JSON.parse(m.data));
  es.addEventListener('stream-error', (m) => console.warn('event stream:', m.data));
  es.onerror = () => {
    if (es.readyState !== EventSource.CLOSED) { status('reconnecting', 'reconnecting…'); return; }
    // The server refused the stream (Redis unreachable, say): start again.
    status('closed', 'disconnected');
    setTimeout(async () => {
      if (await loadStatus()) { connect(); resetThreads(); if (st.selected) reloadTimeline(); loadInbox(); } else es.onerror();
    }, 3000);
  };
}

let inboxTimer = null;
function inboxSoon() { clearTimeout(inboxTimer); inboxTimer = setTimeout(loadInbox, 300); }

function onEvent(ev) {
  const mine = ev.thread_id === st.selected;
  switch (ev.type) {
    case 'checkpoint': {
      const row = { ...ev, ts: ev.ts || ev.time, time: ev.time, writes: [] };
      if (!ev.checkpoint_ns) upsertThread(ev.thread_id, row, true);
      if (mine) addRow(row, true);
      if (st.inbox.has(ev.thread_id)) inboxSoon();
      break;
    }
    case 'writes': {
      if ((ev.channels || []).includes(INTERRUPT)) inboxSoon();
      const div = mine && st.rows.get(rowKey(ev.checkpoint_ns, ev.checkpoint_id));
      if (!div) break;
      mergeWrites(div, ev.channels.map((channel) => ({ task_id: ev.task_id, channel })));
      const s = st.shown;
      if (s && s.ns === ev.checkpoint_ns && s.id === ev.checkpoint_id) showState(s.ns, s.id);
      break;
    }
    case 'thread_deleted':
      st.threads.delete(ev.thread_id);
      renderThreads();
      if (st.inbox.has(ev.thread_id)) inboxSoon();
      if (mine) { clearTimeline(); note('The thread was deleted: new checkpoints will show here.'); }
      break;
    case 'gap': // events Redis no longer holds: say so, then reload what the page shows
      markGap(ev);
      resetThreads();
      loadInbox();
      if (st.selected) loadTimeline(st.selected);
      break;
    default: // thread_copied, runs_deleted, pruned, prefix_reset: reload what they touched
      resetThreads();
      if (mine || !ev.thread_id) reloadTimeline();
      if (mine && ev.type === 'thread_copied') loadBranches();
  }
}

// ---- threads ----

function filterParams() {
  const p = new URLSearchParams();
  const run = $('#f-run').value.trim();
  if (run) p.set('run_id', run);
  for (const kv of $('#f-meta').value.trim().split(/\s+/)) if (kv) p.append('filter', kv);
  return p;
}
const filtered = () => [...filterParams().keys()].length > 0;

// upsertThread records a thread's latest checkpoint; live ones go to the
// top unless a filter is on (the server decides what matches).
function upsertThread(id, row, live) {
  const cur = st.threads.get(id);
  if (live && !cur && filtered()) return;
  if (!cur || cur.checkpoint_id <= row.checkpoint_id) {
    st.threads.set(id, row);
    renderThreadsSoon();
  }
}

// renderThreadsSoon renders the list once per frame however many events
// arrive: a busy prefix sends hundreds a second.
let threadsFrame = 0;
function renderThreadsSoon() {
  if (!threadsFrame) threadsFrame = requestAnimationFrame(() => { threadsFrame = 0; renderThreads(); });
}

function resetThreads() {
  st.threadsGen++;
  st.threads.clear();
  st.nextThreads = '';
  renderThreads();
  return loadThreads('');
}

async function loadThreads(before) {
  await st.ready;
  const gen = st.threadsGen;
  const p = filterParams();
  p.set('limit', '50');
  if (before) p.set('before', before);
  let page;
  try {
    page = await api('api/threads?' + p);
  } catch (e) { showError(e); return; }
  if (gen !== st.threadsGen) return;
  for (const t of page.threads) {
    const cur = st.threads.get(t.thread_id);
    if (!cur || cur.checkpoint_id <= t.latest.checkpoint_id) st.threads.set(t.thread_id, t.latest);
  }
  st.nextThreads = page.next_before || '';
  renderThreads();
}

function renderThreads() {
  const list = $('#thread-list');
  const q = $('#search').value.trim().toLowerCase();
  const focused = document.activeElement && document.activeElement.closest('#thread-list li');
  const focusedID = focused && focused.dataset.threadId;
  const ids = [...st.threads.keys()].filter((id) => !q || id.toLowerCase().includes(q))
    .sort((a, b) => (st.threads.get(b).checkpoint_id > st.threads.get(a).checkpoint_id ? 1 : -1));
  list.replaceChildren(...ids.map((id) => {
    const t = st.threads.get(id);
    const waiting = st.inbox.has(id);
    const b = el('button', { type: 'button', 'aria-current': id === st.selected ? 'true' : null },
      el('span', { class: 'name', text: id }),
      el('span', { class: 'meta', text: `step ${t.step ?? '–'} · ${t.source || '–'} · ${fmtTime(t.time || t.ts)}` }),
      waiting ? el('span', { class: 'waiting', text: 'waiting on interrupt' }) : '');
    b.onclick = () => selectThread(id);
    return el('li', { data: { threadId: id }, class: id === st.selected ? 'selected' : '' }, b);
  }));
  if (focusedID) { const b = list.querySelector(`li[data-thread-id="${CSS.escape(focusedID)}"] button`); if (b) b.focus(); }
  $('#no-threads').hidden = ids.length > 0;
  $('#no-threads').textContent = q ? `No loaded thread matches "${q}": press Enter to open the thread with that exact ID.`
    : st.nextThreads ? 'No match among the newest checkpoints read so far: "More threads" reads further.' : 'No thread.';
  $('#more-threads').hidden = !st.nextThreads;
}

// openThread looks a thread up by its exact ID (the search's Enter).
async function openThread(id) {
  try {
    const t = await api('api/threads/' + enc(id));
    st.threads.set(t.thread_id, t.latest);
    clearError();
    selectThread(t.thread_id);
  } catch (e) {
    if (e.kind === 'not_found') note(`No thread "${id}".`), $('#no-threads').textContent = `No thread "${id}".`, $('#no-threads').hidden = false;
    else showError(e);
  }
}

// ---- the interrupt inbox ----

async function loadInbox() {
  await st.ready;
  let box;
  try { box = await api('api/inbox?scan=500'); } catch (e) { showError(e); return; }
  st.inbox = new Map(box.items.map((it) => [it.thread_id, it]));
  const c = $('#inbox-count');
  c.textContent = String(box.items.length);
  c.dataset.n = String(box.items.length);
  const question = (v) => {
    const x = v && typeof v === 'object' && !Array.isArray(v) && 'value' in v ? v.value : v;
    return typeof x === 'string' ? x : JSON.stringify(x);
  };
  $('#inbox-list').replaceChildren(...box.items.map((it) => {
    const b = el('button', { type: 'button' },
      el('span', { class: 'name', text: it.thread_id }),
      ...it.interrupts.map((i) => el('span', { class: 'question', text: '“' + question(i.value) + '”' })),
      el('span', { class: 'meta', text: `waiting since ${fmtDateTime(it.since)} (${ago(it.since)}) · step ${it.step ?? '–'}` }));
    b.onclick = () => { selectThread(it.thread_id); };
    return el('li', { data: { threadId: it.thread_id, since: it.since || '' } }, b);
  }));
  $('#inbox-note').textContent = box.items.length ? '' : 'No thread is waiting on an interrupt' + (box.complete ? '.' : ` among the ${box.scanned} most recent threads.`);
  renderThreads();
}

// ---- the timeline ----

function selectThread(id) {
  st.selected = id;
  history.replaceState(null, '', '#thread=' + enc(id));
  if (!st.threads.has(id)) openThread(id);
  renderThreads();
  $('#thread-title').textContent = id;
  for (const b of document.querySelectorAll('.actions .write')) b.disabled = false;
  st.shown = null;
  $('#state').replaceChildren(el('p', { class: 'hint', text: 'Select a checkpoint to see its channels, metadata and pending writes.' }));
  $('#diff').replaceChildren(el('p', { class: 'hint', text: 'Pick two checkpoints of the thread (B empty: A\'s parent).' }));
  reloadTimeline();
}

function reloadTimeline() {
  clearTimeline();
  if (!st.selected) return;
  loadTimeline(st.selected);
  loadBranches();
}

function clearTimeline() {
  st.gen++;
  st.rows.clear();
  st.data.clear();
  st.older = '';
  $('#timeline').replaceChildren();
  $('#older').hidden = true;
  note('');
  renderDerived();
}

// loadTimeline merges a page of the thread's checkpoints (the newest, or
// those before `before`) into the timeline, once the stream is live so
// that nothing written meanwhile is missed.
async function loadTimeline(id, before = '') {
  await st.ready;
  const gen = st.gen;
  let url = `api/threads/${enc(id)}/checkpoints?limit=50`;
  if (before) url += '&before=' + enc(before);
  try {
    const page = await api(url);
    if (st.selected !== id || st.gen !== gen) return; // cleared meanwhile
    for (const row of page.checkpoints) addRow(row, false);
    if (before || !st.older) st.older = page.next_before || '';
    $('#older').hidden = !st.older;
    if (!st.rows.size) note('No checkpoint.');
  } catch (e) {
    note(e.message);
    if (e.kind !== 'not_found') showError(e);
  }
}

const isInterrupt = (channels) => (channels || []).includes(INTERRUPT);

// addRow puts a checkpoint in the timeline, newest first; a known one only
// gains its writes.
function addRow(row, fresh) {
  const k = rowKey(row.checkpoint_ns, row.checkpoint_id);
  const known = st.rows.get(k);
  if (known) { mergeWrites(known, row.writes); return; }
  st.data.set(k, row);
  const label = `step ${row.step ?? 'none'}, ${row.source || 'no source'}, checkpoint ${row.checkpoint_id}${row.checkpoint_ns ? ' in ' + row.checkpoint_ns : ''}`;
  const div = el('div', { class: fresh ? 'cp fresh' : 'cp', tabindex: '0', role: 'button', 'aria-label': label,
    data: { checkpointId: row.checkpoint_id, ns: row.checkpoint_ns, step: row.step ?? '', parentId: row.parent_id || '' } },
    el('span', { class: 'step', text: row.step ?? '–' }),
    el('span', { class: 'source', text: row.source || '–' }),
    el('span', { class: 'id', title: row.checkpoint_id, text: shortID(row.checkpoint_id) },
      row.checkpoint_ns ? el('span', { class: 'ns', text: row.checkpoint_ns }) : ''),
    el('span', { class: 'channels' }, ...(row.channels ? row.channels.map((c) => el('span', { class: 'chan', text: c })) : ['?'])),
    el('time', { text: fmtTime(row.time || row.ts), datetime: row.time || row.ts }),
    el('ul', { class: 'writes' }));
  div.writes = new Map(); // task id -> channels
  mergeWrites(div, row.writes);
  div.onclick = () => showState(row.checkpoint_ns, row.checkpoint_id);
  div.onkeydown = (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); div.onclick(); } };
  const timeline = $('#timeline');
  const next = [...timeline.children].find((c) => c.dataset.checkpointId < row.checkpoint_id);
  timeline.insertBefore(div, next || null);
  st.rows.set(k, div);
  note('');
  renderDerivedSoon();
}

// markGap puts a marker in the timeline where events went missing: above
// every checkpoint known when the gap was reported, below those that come
// after it (its sort key is just above the newest known).
function markGap(ev) {
  const g = ev.gap || {};
  const ids = [...st.rows.values()].map((d) => d.dataset.checkpointId).sort();
  const div = el('div', { class: 'gap', role: 'note', title: `${g.stream || ''}${g.from ? ' after ' + g.from : ''}${g.to ? ', resuming at ' + g.to : ''}`,
    data: { checkpointId: (ids[ids.length - 1] || '') + '~', gapReason: g.reason || '', gapStream: g.stream || '' },
    text: `⚠ Events missing (${(g.reason || 'gap').replace('_', ' ')}${g.lost ? ', ' + g.lost.length + ' lost' : ''}) at ${fmtTime(ev.time)}: Redis no longer holds them; the view was reloaded.` });
  const timeline = $('#timeline');
  timeline.insertBefore(div, timeline.firstChild);
}

// mergeWrites adds pending writes ({task_id, channel}) under a checkpoint.
function mergeWrites(div, writes) {
  for (const w of writes || []) {
    const chans = div.writes.get(w.task_id) || [];
    if (!chans.includes(w.channel)) chans.push(w.channel);
    div.writes.set(w.task_id, chans);
  }
  const ul = div.querySelector('.writes');
  ul.replaceChildren(...[...div.writes].map(([task, chans]) =>
    el('li', { data: { taskId: task }, class: isInterrupt(chans) ? 'interrupt' : '',
      text: isInterrupt(chans) ? `${task} → waiting on interrupt()` : `${task} → ${chans.join(', ')}` })));
}

// ---- derived views: the diff pickers and the branch tree ----

let derivedTimer = null;
function renderDerivedSoon() { clearTimeout(derivedTimer); derivedTimer = setTimeout(renderDerived, 50); }

function rootRows() {
  return [...st.data.values()].filter((r) => !r.checkpoint_ns).sort((a, b) => (a.checkpoint_id < b.checkpoint_id ? 1 : -1));
}

function renderDerived() {
  const rows = rootRows();
  const label = (r) => `step ${r.step ?? '–'} · ${r.source || '–'} · ${shortID(r.checkpoint_id)}`;
  for (const [sel, blank] of [['#diff-a', null], ['#diff-b', '(A\'s parent)']]) {
    const s = $(sel);
    const cur = s.value;
    s.replaceChildren(...(blank ? [el('option', { value: '', text: blank })] : []),
      ...rows.map((r) => el('option', { value: r.checkpoint_id, text: label(r) })));
    if (cur && rows.some((r) => r.checkpoint_id === cur)) s.value = cur;
  }
  renderTree(rows);
}

// renderTree draws the loaded checkpoints of the root graph by their parent
// links: a chain stays flat, a checkpoint with several children (a fork)
// opens one nested list per branch.
function renderTree(rows) {
  const byID = new Map(rows.map((r) => [r.checkpoint_id, r]));
  const children = new Map();
  const roots = [];
  for (const r of rows.slice().reverse()) { // oldest first
    if (r.parent_id && byID.has(r.parent_id)) {
      if (!children.has(r.parent_id)) children.set(r.parent_id, []);
      children.get(r.parent_id).push(r);
    } else roots.push(r);
  }
  const node = (r) => {
    const kids = children.get(r.checkpoint_id) || [];
    const b = el('button', { type: 'button', class: 'node' + (kids.length > 1 ? ' fork-point' : ''),
      data: { checkpointId: r.checkpoint_id, children: String(kids.length) } },
      `step ${r.step ?? '–'} · ${r.source || '–'} · ${shortID(r.checkpoint_id)}`,
      kids.length > 1 ? el('span', { class: 'tag', text: `${kids.length} branches` }) : '',
      r.source === 'fork' ? el('span', { class: 'tag', text: 'fork' }) : '');
    b.onclick = () => showState('', r.checkpoint_id);
    return el('li', {}, b);
  };
  // Iterative: a thread's chain may be thousands long.
  const top = el('ul');
  const work = roots.map((r) => [r, top]);
  while (work.length) {
    const [r, ul] = work.shift();
    ul.append(node(r));
    const kids = children.get(r.checkpoint_id) || [];
    if (kids.length === 1) work.unshift([kids[0], ul]);
    else if (kids.length > 1) {
      const branches = kids.map((k) => { const sub = el('ul'); ul.append(el('li', { class: 'branch' }, sub)); return [k, sub]; });
      work.unshift(...branches);
    }
  }
  $('#tree').replaceChildren(rows.length ? top : el('p', { class: 'hint', text: 'No checkpoint loaded.' }));
}

async function loadBranches() {
  const id = st.selected;
  const box = $('#copies');
  box.replaceChildren();
  if (!id) return;
  let b;
  try { b = await api(`api/threads/${enc(id)}/branches`); } catch (e) { box.replaceChildren(el('p', { class: 'hint', text: e.message })); return; }
  if (st.selected !== id) return;
  const links = (list) => list.length ? list.flatMap((c, i) => {
    const a = el('a', { href: '#thread=' + enc(c.thread_id), data: { threadId: c.thread_id }, text: c.thread_id });
    a.onclick = (e) => { e.preventDefault(); selectThread(c.thread_id); };
    return [i ? ', ' : '', a, ` (${fmtDateTime(c.time)})`];
  }) : ['none in the recent events'];
  box.replaceChildren(el('p', { id: 'copied-from' }, el('strong', { text: 'Copied from: ' }), ...links(b.copied_from)),
    el('p', { id: 'copied-to' }, el('strong', { text: 'Copies: ' }), ...links(b.copies)));
}

// ---- the state panel ----

async function showState(ns, id) {
  st.shown = { ns, id };
  for (const div of st.rows.values()) div.classList.toggle('selected', div.dataset.checkpointId === id && div.dataset.ns === ns);
  $('#tab-state').click();
  const panel = $('#state');
  let s;
  try {
    s = await api(`api/threads/${enc(st.selected)}/checkpoints/${enc(id)}?ns=${enc(ns)}`);
  } catch (e) {
    panel.replaceChildren(el('p', { class: 'hint', text: e.message }));
    if (e.kind === 'data_loss' || e.kind === 'decrypt') showError(e);
    return;
  }
  if (!st.shown || st.shown.id !== id) return;
  const json = (v) => el('pre', { text: JSON.stringify(v, null, 2) });
  const dl = el('dl');
  const fields = [['thread', s.thread_id], ['namespace', s.checkpoint_ns || '(root)'], ['checkpoint', s.checkpoint_id],
    ['parent', s.parent ? s.parent.checkpoint_id : '(none)'], ['step', s.metadata.step ?? '–'],
    ['source', s.metadata.source ?? '–'], ['time', fmtDateTime(s.time || s.ts)]];
  for (const [k, v] of fields) dl.append(el('dt', { text: k }), el('dd', { text: v }));
  const actions = el('div', { class: 'state-actions' });
  const diffParent = el('button', { type: 'button', text: 'Diff with parent', disabled: !s.parent });
  diffParent.onclick = () => showDiff(s.checkpoint_id, '', ns);
  actions.append(diffParent);
  if (st.status && st.status.allow_writes && !ns) {
    const fork = el('button', { type: 'button', class: 'write', id: 'fork', text: 'Fork from here…' });
    fork.onclick = () => forkAt(s.checkpoint_id);
    actions.append(fork);
  }
  const out = el('div', { data: { stateCheckpointId: s.checkpoint_id } }, dl, actions);
  const interrupts = s.pending_writes.filter((w) => w.channel === INTERRUPT);
  if (interrupts.length) {
    out.append(el('h3', { text: `Waiting on interrupt() (${interrupts.length})` }));
    for (const w of interrupts) out.append(json(w.value));
  }
  out.append(el('h3', { text: 'Channel values' }));
  for (const ch of Object.keys(s.channel_versions || {}).sort()) {
    out.append(el('h3', { class: 'channel', data: { channel: ch }, text: `${ch} (${shortVersion(s.channel_versions[ch])})` }),
      ch in (s.channel_values || {}) ? json(s.channel_values[ch]) : el('p', { class: 'hint', text: 'delta channel: its value is its history (redcheck show)' }));
  }
  out.append(el('h3', { text: `Pending writes (${s.pending_writes.length})` }));
  for (const w of s.pending_writes) out.append(el('h3', { text: `${w.task_id} → ${w.channel}` }), json(w.value));
  out.append(el('h3', { text: 'Metadata' }), json(s.metadata));
  panel.replaceChildren(out);
}

// ---- the diff ----

// appended reports whether list b is list a with items added at its end.
function appended(a, b) {
  return Array.isArray(a) && Array.isArray(b) && b.length > a.length &&
    a.every((x, i) => JSON.stringify(x) === JSON.stringify(b[i]));
}

// pointerGet returns the member of v at a JSON Pointer through objects.
function pointerGet(v, path) {
  for (const tok of path.split('/').slice(1)) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = v[tok.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

async function showDiff(a, b, ns = '') {
  $('#tab-diff').click();
  if (a) $('#diff-a').value = a;
  $('#diff-b').value = b || '';
  const out = $('#diff');
  let d;
  try {
    d = await api(`api/threads/${enc(st.selected)}/diff?a=${enc(a)}&b=${enc(b || '')}&ns=${enc(ns)}`);
  } catch (e) { out.replaceChildren(el('p', { class: 'hint', text: e.message })); return; }
  const name = (r) => r ? `step ${r.step ?? '–'} · ${r.source || '–'} · ${r.checkpoint_id}` : '(nothing: A has no parent)';
  const json = (v, cls) => el('pre', { class: cls, text: JSON.stringify(v, null, 2) });
  const compact = (v) => JSON.stringify(v);
  const sign = { added: '+', removed: '−', changed: '~' };
  const parts = [el('p', { class: 'mono' }, 'B: ' + name(d.b)), el('p', { class: 'mono' }, 'A: ' + name(d.a))];
  for (const c of d.changes) {
    const box = el('div', { class: 'change', data: { channel: c.channel, kind: c.kind } },
      el('h3', { text: `${sign[c.kind]} ${c.channel} (${c.kind})` }));
    if (c.members) {
      box.append(el('ul', {}, ...c.members.map((op) => el('li', { class: 'mono', data: { op: op.op, path: op.path },
        text: op.op === 'add' ? `+ ${op.path}: ${compact(op.value)}` : op.op === 'remove' ? `− ${op.path}: ${compact(pointerGet(c.old, op.path))}`
          : `~ ${op.path}: ${compact(pointerGet(c.old, op.path))} → ${compact(op.value)}` }))));
    } else if (c.kind === 'changed' && appended(c.old, c.new)) {
      // A list that grew: the items appended, not the whole list twice.
      const n = c.new.length - c.old.length;
      box.append(el('p', { class: 'hint', text: `${n} item${n === 1 ? '' : 's'} appended to ${c.old.length}:` }),
        json(c.new.slice(c.old.length), 'new'));
    } else {
      if (c.kind !== 'added') box.append(json(c.old, 'old'));
      if (c.kind !== 'removed') box.append(json(c.new, 'new'));
    }
    parts.push(box);
  }
  parts.push(el('p', { class: 'hint', id: 'diff-summary', text: `${d.changes.length} channels changed, ${d.unchanged} unchanged` }));
  out.replaceChildren(...parts);
}

// ---- writes (with --allow-writes), each confirmed ----

// confirmDialog asks; with input, it also asks for a value. It resolves to
// the value (or true), or null when cancelled.
function confirmDialog(title, text, okLabel, input) {
  const d = $('#confirm');
  $('#confirm-title').textContent = title;
  $('#confirm-text').textContent = text;
  $('#confirm-ok').textContent = okLabel;
  $('#confirm-field').hidden = !input;
  $('#confirm-input').value = input || '';
  d.returnValue = '';
  return new Promise((resolve) => {
    d.onclose = () => resolve(d.returnValue === 'ok' ? (input ? $('#confirm-input').value.trim() : true) : null);
    d.showModal();
    (input ? $('#confirm-input') : $('#confirm-cancel')).focus();
  });
}

async function forkAt(id) {
  const src = st.selected;
  const target = await confirmDialog('Fork thread', `Copy thread "${src}" with its history to a new thread, and fork it at checkpoint ${id}: the new thread's latest checkpoint gets that checkpoint's state. "${src}" is not changed.`, 'Fork', src + '-fork');
  if (!target) return;
  try {
    await write('POST', `api/threads/${enc(src)}/copy`, { target, at: id });
    clearError();
    selectThread(target);
  } catch (e) { showError(e); }
}

async function pruneThread() {
  const id = st.selected;
  if (!id || !(await confirmDialog('Prune thread', `Prune thread "${id}": each namespace keeps its latest checkpoint; every older checkpoint is deleted. This cannot be undone.`, 'Prune'))) return;
  try { await write('POST', `api/threads/${enc(id)}/prune`); clearError(); reloadTimeline(); } catch (e) { showError(e); }
}

async function deleteThread() {
  const id = st.selected;
  if (!id || !(await confirmDialog('Delete thread', `Delete thread "${id}" with all its checkpoints, pending writes and values. This cannot be undone.`, 'Delete'))) return;
  try {
    await write('DELETE', `api/threads/${enc(id)}`);
    clearError();
    st.threads.delete(id);
    renderThreads();
    clearTimeline();
    note('The thread was deleted.');
  } catch (e) { showError(e); }
}

// ---- start ----

tabs(['tab-threads', 'tab-inbox']);
tabs(['tab-timeline', 'tab-branches']);
tabs(['tab-state', 'tab-diff']);
arrowKeys($('#thread-list'), 'li > button');
arrowKeys($('#inbox-list'), 'li > button');
arrowKeys($('#timeline'), '.cp');
arrowKeys($('#tree'), '.node');
$('#older').onclick = () => loadTimeline(st.selected, st.older);
$('#more-threads').onclick = () => loadThreads(st.nextThreads);
$('#search').oninput = () => renderThreads();
$('#search-form').onsubmit = (e) => {
  e.preventDefault();
  const q = $('#search').value.trim();
  if (q && st.threads.has(q)) selectThread(q); else if (q) openThread(q);
};
$('#filter-form').onsubmit = (e) => { e.preventDefault(); resetThreads(); };
$('#filter-form').onreset = () => setTimeout(resetThreads, 0);
$('#diff-form').onsubmit = (e) => { e.preventDefault(); if ($('#diff-a').value) showDiff($('#diff-a').value, $('#diff-b').value); };
$('#prune').onclick = pruneThread;
$('#delete').onclick = deleteThread;

(async function start() {
  while (!(await loadStatus()) && st.status.kind !== 'data_loss') await new Promise((r) => setTimeout(r, 3000));
  connect();
  await loadThreads('');
  loadInbox();
  const m = /#thread=([^&]*)/.exec(location.hash);
  if (m) selectThread(decodeURIComponent(m[1]));
})();
