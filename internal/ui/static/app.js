// The redcheck dashboard: the threads, a live timeline of the selected
// thread's checkpoints, and the state of a clicked checkpoint. Plain DOM, no
// build step. The server's event stream (api/events) keeps it current.
'use strict';

// A mark of this page load: a test reads it to tell that no reload happened.
window.dashboardLoadID = Date.now() + '-' + Math.random().toString(36).slice(2);

const $ = (sel) => document.querySelector(sel);
const enc = encodeURIComponent;

const st = {
  threads: new Map(), // thread id -> its latest checkpoint row
  selected: null,     // the selected thread's id
  rows: new Map(),    // ns + "\0" + id -> timeline element, selected thread only
  older: '',          // ?before= of the next older page of the timeline
  gen: 0,             // bumped when the timeline is cleared: late pages are dropped
  threadsGen: 0,      // bumped when a thread is deleted: late thread lists are refetched
  shown: null,        // {ns, id} of the checkpoint in the state panel
  ready: null,        // resolves once the event stream is live
};
const rowKey = (ns, id) => ns + '\u0000' + id;

// el builds an element: attrs may hold class, text, title and data (dataset).
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  if (attrs.class) e.className = attrs.class;
  if (attrs.text !== undefined) e.textContent = String(attrs.text);
  if (attrs.title) e.title = attrs.title;
  Object.assign(e.dataset, attrs.data || {});
  e.append(...children);
  return e;
}

async function api(path) {
  const r = await fetch(path);
  if (!r.ok) throw new Error(path + ': ' + r.status + ' ' + (await r.text()));
  return r.json();
}

function fmtTime(ts) {
  const d = new Date(String(ts || '').replace(/(\.\d{3})\d+/, '$1'));
  return isNaN(d) ? (ts || '') : d.toLocaleTimeString();
}

// shortVersion shows "000000000003.9f86d081" as "v3".
function shortVersion(v) {
  const m = /^0*(\d+)\./.exec(v || '');
  return m ? 'v' + m[1] : (v || '–');
}

function note(text) { $('#timeline-note').textContent = text; }

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
    // The server refused to resume: start a new stream and reload.
    status('closed', 'disconnected');
    setTimeout(() => { connect(); loadThreads(); if (st.selected) loadTimeline(st.selected); }, 2000);
  };
}

function onEvent(ev) {
  const mine = ev.thread_id === st.selected;
  switch (ev.type) {
    case 'checkpoint': {
      const row = { ...ev, ts: ev.ts || ev.time, writes: [] };
      const cur = st.threads.get(ev.thread_id);
      if (!cur || cur.checkpoint_id <= ev.checkpoint_id) { st.threads.set(ev.thread_id, row); renderThreads(); }
      if (mine) addRow(row, true);
      break;
    }
    case 'writes': {
      const div = mine && st.rows.get(rowKey(ev.checkpoint_ns, ev.checkpoint_id));
      if (!div) break;
      mergeWrites(div, ev.channels.map((channel) => ({ task_id: ev.task_id, channel })));
      const s = st.shown;
      if (s && s.ns === ev.checkpoint_ns && s.id === ev.checkpoint_id) showState(s.ns, s.id);
      break;
    }
    case 'thread_deleted':
      st.threads.delete(ev.thread_id);
      st.threadsGen++;
      renderThreads();
      if (mine) { clearTimeline(); note('The thread was deleted: new checkpoints will show here.'); }
      break;
    case 'gap': // events Redis no longer holds: say so, then reload what the page shows
      markGap(ev);
      loadThreads();
      if (st.selected) loadTimeline(st.selected);
      break;
    default: // thread_copied, runs_deleted, pruned: reload what they touched
      loadThreads();
      if (mine) { clearTimeline(); loadTimeline(st.selected); }
  }
}

// ---- threads ----

async function loadThreads() {
  await st.ready;
  let gen, threads;
  do { // a list fetched across a deletion may still hold the deleted thread
    gen = st.threadsGen;
    threads = await api('api/threads');
  } while (gen !== st.threadsGen);
  for (const t of threads) {
    const cur = st.threads.get(t.thread_id);
    if (!cur || cur.checkpoint_id <= t.latest.checkpoint_id) st.threads.set(t.thread_id, t.latest);
  }
  renderThreads();
}

function renderThreads() {
  const list = $('#thread-list');
  list.replaceChildren();
  for (const id of [...st.threads.keys()].sort()) {
    const t = st.threads.get(id);
    const li = el('li', { data: { threadId: id }, class: id === st.selected ? 'selected' : '' },
      el('span', { class: 'name', text: id }),
      el('span', { class: 'meta', text: `step ${t.step ?? '–'} · ${t.source || '–'} · ${fmtTime(t.ts)}` }));
    li.onclick = () => selectThread(id);
    list.append(li);
  }
  $('#no-threads').hidden = st.threads.size > 0;
}

// ---- the timeline ----

function selectThread(id) {
  st.selected = id;
  history.replaceState(null, '', '#thread=' + enc(id));
  renderThreads();
  $('#timeline-title').textContent = id;
  clearTimeline();
  loadTimeline(id);
}

function clearTimeline() {
  st.gen++;
  st.rows.clear();
  st.older = '';
  $('#timeline').replaceChildren();
  $('#older').hidden = true;
  note('');
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
    note(String(e));
  }
}

// addRow puts a checkpoint in the timeline, newest first; a known one only
// gains its writes.
function addRow(row, fresh) {
  const k = rowKey(row.checkpoint_ns, row.checkpoint_id);
  const known = st.rows.get(k);
  if (known) { mergeWrites(known, row.writes); return; }
  const div = el('div', { class: fresh ? 'cp fresh' : 'cp', data: { checkpointId: row.checkpoint_id, ns: row.checkpoint_ns, step: row.step ?? '' } },
    el('span', { class: 'step', text: row.step ?? '–' }),
    el('span', { class: 'source', text: row.source || '–' }),
    el('span', { class: 'id', title: row.checkpoint_id, text: '…' + row.checkpoint_id.slice(-6) },
      row.checkpoint_ns ? el('span', { class: 'ns', text: row.checkpoint_ns }) : ''),
    el('span', { class: 'channels' }, ...(row.channels ? row.channels.map((c) => el('span', { class: 'chan', text: c })) : ['?'])),
    el('time', { text: fmtTime(row.ts) }),
    el('ul', { class: 'writes' }));
  div.writes = new Map(); // task id -> channels
  mergeWrites(div, row.writes);
  div.onclick = () => showState(row.checkpoint_ns, row.checkpoint_id);
  const timeline = $('#timeline');
  const next = [...timeline.children].find((c) => c.dataset.checkpointId < row.checkpoint_id);
  timeline.insertBefore(div, next || null);
  st.rows.set(k, div);
  note('');
}

// markGap puts a marker in the timeline where events went missing: above
// every checkpoint known when the gap was reported, below those that come
// after it (its sort key is just above the newest known).
function markGap(ev) {
  const g = ev.gap || {};
  const ids = [...st.rows.values()].map((d) => d.dataset.checkpointId).sort();
  const div = el('div', { class: 'gap', title: `${g.stream || ''}${g.from ? ' after ' + g.from : ''}${g.to ? ', resuming at ' + g.to : ''}`,
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
    el('li', { data: { taskId: task }, text: `${task} → ${chans.join(', ')}` })));
}

// ---- the state panel ----

async function showState(ns, id) {
  st.shown = { ns, id };
  for (const div of st.rows.values()) div.classList.toggle('selected', div.dataset.checkpointId === id && div.dataset.ns === ns);
  const panel = $('#state');
  let s;
  try {
    s = await api(`api/threads/${enc(st.selected)}/checkpoints/${enc(id)}?ns=${enc(ns)}`);
  } catch (e) {
    panel.replaceChildren(el('p', { class: 'hint', text: String(e) }));
    return;
  }
  if (!st.shown || st.shown.id !== id) return;
  const json = (v) => el('pre', { text: JSON.stringify(v, null, 2) });
  const dl = el('dl');
  const fields = [['thread', s.thread_id], ['namespace', s.checkpoint_ns || '(root)'], ['checkpoint', s.checkpoint_id],
    ['parent', s.parent ? s.parent.checkpoint_id : '(none)'], ['step', s.metadata.step ?? '–'],
    ['source', s.metadata.source ?? '–'], ['time', s.ts]];
  for (const [k, v] of fields) dl.append(el('dt', { text: k }), el('dd', { text: v }));
  const out = el('div', { data: { stateCheckpointId: s.checkpoint_id } }, dl, el('h3', { text: 'Channel values' }));
  for (const ch of Object.keys(s.channel_versions || {}).sort()) {
    out.append(el('h3', { class: 'channel', data: { channel: ch }, text: `${ch} (${shortVersion(s.channel_versions[ch])})` }),
      json(s.channel_values[ch]));
  }
  out.append(el('h3', { text: `Pending writes (${s.pending_writes.length})` }));
  for (const w of s.pending_writes) out.append(el('h3', { text: `${w.task_id} → ${w.channel}` }), json(w.value));
  out.append(el('h3', { text: 'Metadata' }), json(s.metadata));
  panel.replaceChildren(out);
}

// ---- start ----

$('#older').onclick = () => loadTimeline(st.selected, st.older);
connect();
loadThreads().then(() => {
  const m = /#thread=([^&]*)/.exec(location.hash);
  if (m) selectThread(decodeURIComponent(m[1]));
}, (e) => note(String(e)));
