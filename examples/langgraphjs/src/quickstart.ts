// The LangGraph.js quickstart of the repository's README: the code between
// the README:begin and README:end lines is, byte for byte, the README's ```ts
// block (test/readme.test.ts checks it; npm test type-checks it). Run it on
// the Redis of REDIS_URL (default redis://127.0.0.1:6379):
//
//   npm run build && node dist/quickstart.js
//
// README:begin
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { RedcheckSaver } from "@graphstate/redcheck";

// A saver that owns its node-redis client; or new RedcheckSaver(client, options)
// over a createClient() or createCluster() client of your own.
const checkpointer = await RedcheckSaver.fromUrl(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { prefix: "myapp" });

const graph = new StateGraph(MessagesAnnotation)
  .addNode("echo", (state) => ({ messages: [new AIMessage(`You said: ${state.messages.at(-1)?.content}`)] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile({ checkpointer });

const config = { configurable: { thread_id: "user-42" } };
await graph.invoke({ messages: [new HumanMessage("hi")] }, config);

// The thread's state, read back from Redis, then its checkpoints, newest first.
const state = await graph.getState(config);
console.log(state.values.messages.map((m: BaseMessage) => m.content));
for await (const t of checkpointer.list(config)) console.log(t.checkpoint.id, t.metadata?.step);
await checkpointer.close();
// README:end
