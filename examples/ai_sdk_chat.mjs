// A chat with a hookline agent through the AI SDK's own chat logic (the `ai` package, v6), without React.
//
//   npm install ai@6
//   hookline serve myapp:agent &            # or any hookline server
//   node examples/ai_sdk_chat.mjs http://127.0.0.1:8000 "What is 2+3? Use the add tool."
//
// It prints the answer's parts as they settle: text, tool calls and their results, status lines.
import { AbstractChat, DefaultChatTransport } from "ai";

const [url = "http://127.0.0.1:8000", text = "Hello!"] = process.argv.slice(2);

class State {  // what useChat keeps in React state, as plain fields
  constructor() { this.status = "ready"; this.error = undefined; this.messages = []; }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) { this.messages = this.messages.map((old, i) => (i === index ? message : old)); }
  snapshot(thing) { return structuredClone(thing); }
}

class Chat extends AbstractChat {
  constructor(options) { super({ ...options, state: new State() }); }
}

const chat = new Chat({
  id: `chat-${Date.now()}`,  // the hookline session's id
  transport: new DefaultChatTransport({
    api: `${url}/v1/ai-sdk/chat`,
    headers: process.env.HOOKLINE_TOKEN ? { Authorization: `Bearer ${process.env.HOOKLINE_TOKEN}` } : {},
  }),
  onError: (error) => { console.error(`error: ${error.message}`); process.exitCode = 1; },
});
await chat.sendMessage({ text });
for (const part of chat.lastMessage.parts) {
  if (part.type === "text") console.log(part.text);
  else if (part.type.startsWith("tool-")) console.log(`[${part.type.slice(5)}] ${JSON.stringify(part.input)} -> ${part.output ?? part.state}`);
  else if (part.type === "data-status") console.log(`  · ${part.data.text}`);
}
