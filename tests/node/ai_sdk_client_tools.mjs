// Client-side tools through the ai package's own chat logic (AbstractChat + DefaultChatTransport, AI SDK v6)
// against a live hookline server: node ai_sdk_client_tools.mjs <url> <chat id> <scenario>.
// The transport's `body` declares the client's tool (get_location) on every request; onToolCall answers it
// with addToolResult / addToolOutput, and sendAutomaticallyWhen sends the answer. Prints what the chat kept
// (and the bodies it sent), as JSON, on its last line.
//   client:   "where" -> get_location called; the client's output; the model's answer
//   error:    the same, the client reports an error (state output-error)
//   both:     "both" -> the server's add and the client's get_location in one model turn
//   approval: "risky" -> the server's danger (approval) and get_location in one turn; approved afterwards
//   abandon:  get_location called, the client does not answer it; the user sends another message
import {
  DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";

import { Chat } from "./chat.mjs";

const [url, chatId, scenario] = process.argv.slice(2);

const tools = {
  get_location: {
    description: "Where the user is, as the browser knows it.",
    inputSchema: { type: "object", properties: {} },
  },
};
const errors = [];
const finishes = [];
const sent = [];
const toolCalls = [];
const recording = (input, init) => { sent.push(JSON.parse(init.body)); return fetch(input, init); };
const eitherComplete = (options) => lastAssistantMessageIsCompleteWithToolCalls(options)
  || lastAssistantMessageIsCompleteWithApprovalResponses(options);

const chat = new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api: `${url}/v1/ai-sdk/chat`, body: { tools }, fetch: recording }),
  onError: (error) => errors.push(String(error)),
  onFinish: ({ finishReason, isAbort, isError }) => finishes.push({ finishReason, isAbort, isError }),
  onToolCall: ({ toolCall }) => {
    toolCalls.push(toolCall.toolName);
    if (toolCall.toolName !== "get_location" || scenario === "abandon") return;  // the server's own
    // not awaited: the chat runs its jobs one at a time, and this call is inside one (the AI SDK's advice)
    if (scenario === "error") {
      chat.addToolOutput({ tool: "get_location", toolCallId: toolCall.toolCallId, state: "output-error",
                           errorText: "no GPS here" });
    } else {
      chat.addToolResult({ tool: "get_location", toolCallId: toolCall.toolCallId, output: { city: "Paris" } });
    }
  },
  sendAutomaticallyWhen: scenario === "approval" ? eitherComplete : lastAssistantMessageIsCompleteWithToolCalls,
});
const idle = async () => {
  while (chat.status === "submitted" || chat.status === "streaming") await new Promise((r) => setTimeout(r, 10));
};

const out = { errors, finishes, sent, toolCalls };
const prompts = { client: "where", error: "where", both: "both", approval: "risky", abandon: "where" };
await chat.sendMessage({ text: prompts[scenario] });
if (scenario === "approval") {
  out.paused = structuredClone(chat.messages);
  const part = chat.lastMessage.parts.find((p) => p.state === "approval-requested");
  await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
  await new Promise((r) => setTimeout(r, 50));
} else if (scenario === "abandon") {
  await chat.sendMessage({ text: "never mind" });
}
await idle();
out.messages = chat.messages;
out.status = chat.status;
console.log(JSON.stringify(out));
