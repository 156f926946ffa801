// A LangGraph.js agent that checkpoints through RedcheckSaver on plain Redis:
// an agent node (a scripted model, so that the example needs no API key)
// asks for a tool call, an approval node pauses the run with interrupt()
// until a human answers, a ToolNode runs the tool, and the agent answers.
// Every step is a redcheck checkpoint that the Go tools read: the
// dashboard, `redcheck tail`, `redcheck check`, the Go saver.
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { z } from "zod";

export const getWeather = tool(async ({ city }: { city: string }) => `It is sunny and 24 °C in ${city}.`, {
  name: "get_weather",
  description: "The current weather in a city.",
  schema: z.object({ city: z.string() }),
});

export const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  approved: Annotation<boolean | undefined>(),
});

/** agent is the scripted model: a tool call for a question, an answer from a tool result. */
function agent(state: typeof State.State): { messages: BaseMessage[] } {
  const last = state.messages[state.messages.length - 1];
  if (last instanceof ToolMessage) {
    return { messages: [new AIMessage({ content: `Here is the weather: ${String(last.content)}`, id: "answer" })] };
  }
  if (state.approved === false) {
    return { messages: [new AIMessage({ content: "Understood: I will not look it up.", id: "declined" })] };
  }
  const city = /in ([A-Z][a-z]+)/.exec(String(last?.content ?? ""))?.[1] ?? "Paris";
  return {
    messages: [new AIMessage({ content: "", id: "ask-tool", tool_calls: [{ id: "call-1", name: "get_weather", args: { city }, type: "tool_call" }] })],
  };
}

/** approve pauses the run until a human answers "yes" or "no" (Command({ resume })). */
function approve(state: typeof State.State): { approved: boolean } {
  const last = state.messages[state.messages.length - 1] as AIMessage;
  const answer = interrupt({ question: "May I call this tool?", tool_calls: last.tool_calls });
  return { approved: answer === "yes" };
}

export function buildGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode("agent", agent)
    .addNode("approve", approve)
    .addNode("tools", new ToolNode([getWeather]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => ((s.messages[s.messages.length - 1] as AIMessage).tool_calls?.length ? "approve" : END), ["approve", END])
    .addConditionalEdges("approve", (s) => (s.approved ? "tools" : "agent"), ["tools", "agent"])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}
