// The ai package's own chat logic (AbstractChat + DefaultChatTransport, AI SDK v6) against a live hookline
// server: node ai_sdk_chat.mjs <url> <chat id> <scenario>. Every chunk goes through the package's
// uiMessageChunkSchema (the transport parses with it). Prints what the chat kept, as JSON, on its last line.
//   tools:    "add 2 and 3" -> tool parts and the answer
//   approval: "danger" -> approval-requested; addToolApprovalResponse; sent again by itself
//   deny:     the same, refused with a reason
//   resume:   a slow answer, the chat dropped mid-answer, a new chat resumes it (resumeStream)
import {
  DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses,
} from "ai";

import { Chat } from "./chat.mjs";

const [url, chatId, scenario] = process.argv.slice(2);

const errors = [];
const finishes = [];
const makeChat = (extra = {}) => new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api: `${url}/v1/ai-sdk/chat` }),
  onError: (error) => errors.push(String(error)),
  onFinish: ({ finishReason, isAbort, isError }) => finishes.push({ finishReason, isAbort, isError }),
  ...extra,
});
const idle = async (chat) => { while (chat.status === "submitted" || chat.status === "streaming") await new Promise((r) => setTimeout(r, 10)); };

let chat = makeChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
const out = { errors, finishes };
if (scenario === "tools") {
  await chat.sendMessage({ text: "add 2 and 3" });
} else if (scenario === "approval" || scenario === "deny") {
  await chat.sendMessage({ text: "danger" });
  out.paused = structuredClone(chat.messages);
  const part = chat.lastMessage.parts.find((p) => p.state === "approval-requested");
  const approved = scenario === "approval";
  await chat.addToolApprovalResponse({ id: part.approval.id, approved, reason: approved ? undefined : "not today" });
  await new Promise((r) => setTimeout(r, 50));
  await idle(chat);
} else if (scenario === "resume") {
  const sending = chat.sendMessage({ text: "tell 80 0.03" });
  while (!JSON.stringify(chat.messages).includes("w10")) await new Promise((r) => setTimeout(r, 10));
  chat.stop();  // the page goes away mid-answer; the run goes on in the server
  await sending;
  out.before = structuredClone(chat.messages);
  chat = makeChat();
  chat.state.messages = structuredClone(out.before.slice(0, 1));  // a reloaded page knows the prompt
  await chat.resumeStream();
  await idle(chat);
}
out.messages = chat.messages;
out.status = chat.status;
console.log(JSON.stringify(out));
