// The agent workload of issue 6, built exactly as bench/workload.go builds
// it: 10 channels, 2 changing per step ("messages", a list growing by one
// ~250-byte message per step, and one of the 9 others in turn), 2 tasks × 3
// pending writes per step. Values are shared, read-only, between operations.

export const channels = ["messages", "plan", "scratchpad", "tool_results", "user_profile",
  "retrieval", "summary", "route", "config", "step_info"];

const messageText = 200;
const otherText = 256;
const versionSuffix = ".5eed5eed";
const words = ["the", "agent", "calls", "a", "tool", "with", "arguments", "and", "reads",
  "its", "result", "before", "answering", "user", "question", "about", "weather", "in", "paris"];

// text returns n bytes of deterministic words, different for each seed.
export function text(seed, n) {
  let b = "";
  for (let i = seed; b.length < n; i++) b += words[(i * 7 + seed) % words.length] + " ";
  return b.slice(0, n);
}

export function message(j) {
  return { type: j % 2 === 1 ? "ai" : "human", id: `msg-${String(j).padStart(6, "0")}`, content: text(j, messageText) };
}

function otherValue(k, rev, size) {
  return { channel: channels[k], rev, data: text(k * 1000 + rev, size) };
}

export function version(n) {
  return String(n).padStart(12, "0") + versionSuffix;
}

// agentTable returns steps 0..n-1 of the agent workload.
export function agentTable(n) {
  const base = Array.from({ length: n }, (_, j) => message(j));
  return buildTable(n, (s) => base.slice(0, s + 1), otherText);
}

// fixedTable returns n steps whose state keeps about size bytes: 90% a
// message list whose last message changes every step, 10% the 9 others.
export function fixedTable(n, size) {
  const count = Math.max(1, Math.floor((size * 9) / 10 / 250));
  const other = Math.max(8, Math.floor(size / 10 / 9) - 24);
  const base = Array.from({ length: count }, (_, j) => message(j));
  return buildTable(n, (s) => {
    const msgs = base.slice();
    msgs[count - 1] = message(count - 1 + s);
    return msgs;
  }, other);
}

function buildTable(n, messages, otherSize) {
  const t = [];
  const rev = new Array(channels.length).fill(0);
  for (let s = 0; s < n; s++) {
    const changedK = 1 + (s % (channels.length - 1));
    rev[0]++;
    rev[changedK]++;
    if (s === 0) rev.fill(1);
    const values = {};
    const versions = {};
    channels.forEach((ch, k) => {
      values[ch] = k === 0 ? messages(s) : otherValue(k, rev[k], otherSize);
      versions[ch] = version(rev[k]);
    });
    const changed = { [channels[0]]: versions[channels[0]], [channels[changedK]]: versions[channels[changedK]] };
    const seen = {
      agent: { [channels[0]]: versions[channels[0]], [channels[7]]: versions[channels[7]] },
      tools: { [channels[3]]: versions[channels[3]] },
    };
    const writes = [
      [[channels[0], message(s + 1)], [channels[7], "tools"], [channels[1], { next: "tools", step: s }]],
      [[channels[3], { tool: "search", result: text(s, 160) }], [channels[2], text(s + 7, 100)], [channels[9], s]],
    ];
    t.push({ values, versions, changed, all: { ...versions }, seen, writes });
  }
  return t;
}

export const taskIDs = ["task-agent", "task-tools"];
