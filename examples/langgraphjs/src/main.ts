// Runs the agent on the Redis of REDIS_URL (default redis://127.0.0.1:6379):
// the question, the pause at the approval, the resume, the answer.
//
//   cd js && npm ci                      # builds @graphstate/redcheck
//   cd examples/langgraphjs && npm ci && npm start
//   go run ./cmd/redcheck ui --prefix langgraphjs --url "$REDIS_URL"   # watch it live
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { RedcheckSaver } from "@graphstate/redcheck";
import { buildGraph } from "./agent.js";

const saver = await RedcheckSaver.fromUrl(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { prefix: process.env.PREFIX ?? "langgraphjs" });
try {
  const graph = buildGraph(saver);
  const config = { configurable: { thread_id: process.env.THREAD ?? `weather-${Date.now()}` } };
  await graph.invoke({ messages: [new HumanMessage("What is the weather in Paris?")] }, config);
  const paused = await graph.getState(config);
  console.log("paused at", paused.next, "asking:", JSON.stringify(paused.tasks[0]?.interrupts[0]?.value));
  const done = await graph.invoke(new Command({ resume: "yes" }), config);
  console.log("answer:", done.messages[done.messages.length - 1]?.content);
  console.log("thread", config.configurable.thread_id, "in prefix", saver.layout.prefix);
} finally {
  await saver.close();
}
