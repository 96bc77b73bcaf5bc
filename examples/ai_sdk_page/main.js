// A chat page on the AI SDK's own chat logic (the `ai` package, v6), without React: AbstractChat and
// DefaultChatTransport are the classes useChat wraps. ChatState keeps what useChat keeps in React state
// and says when it changes; render() draws the messages. Built by `npm run build` into dist/app.js.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";

// The tools this page runs itself (name -> description and JSON schema of the input), sent in every
// request's body: hookline offers them to the model, and a call to one waits for the page's output.
const tools = {
  get_locale: {
    description: "The user's language and time zone, as their browser knows them.",
    inputSchema: { type: "object", properties: {} },
  },
};

class ChatState {
  #messages = [];
  #status = "ready";
  #error = undefined;

  constructor(onChange) { this.onChange = onChange; }

  get messages() { return this.#messages; }
  set messages(messages) { this.#messages = messages; this.onChange(); }
  get status() { return this.#status; }
  set status(status) { this.#status = status; this.onChange(); }
  get error() { return this.#error; }
  set error(error) { this.#error = error; this.onChange(); }

  // the chat goes on changing the message it hands over: keep a copy, so that a change is a new object
  pushMessage(message) { this.messages = [...this.#messages, this.snapshot(message)]; }
  popMessage() { this.messages = this.#messages.slice(0, -1); }
  replaceMessage(index, message) { this.messages = this.#messages.with(index, this.snapshot(message)); }
  snapshot(thing) { return structuredClone(thing); }
}

class Chat extends AbstractChat {
  constructor({ onChange, ...options }) { super({ ...options, state: new ChatState(onChange) }); }
}

const log = document.querySelector("#messages");
const activityLine = document.querySelector("#activity");
const errorLine = document.querySelector("#error");
const input = document.querySelector("#prompt");
const sendButton = document.querySelector("#send");

let activity = "";  // the latest status line of the answer going on ("running add(a=2, b=3)")
let frame = 0;
const drawn = new Map();  // message id -> [the message as drawn, its element]

const chat = new Chat({
  // the chat's id (generated) is the hookline session's; the page's server passes /v1 on to hookline
  transport: new DefaultChatTransport({ api: "/v1/ai-sdk/chat", body: { tools } }),
  onChange: scheduleRender,
  onData(part) {
    if (part.type === "data-status") activity = part.data.text;
  },
  onToolCall({ toolCall }) {
    if (toolCall.toolName !== "get_locale") return;  // the server's own tools come here too
    const output = { language: navigator.language, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone };
    // not awaited: the chat is still reading the stream that made the call (the AI SDK's advice)
    chat.addToolOutput({ tool: "get_locale", toolCallId: toolCall.toolCallId, output });
  },
  // send the chat again once the last answer's calls all have their output, or the user's approval
  sendAutomaticallyWhen: (options) => lastAssistantMessageIsCompleteWithToolCalls(options)
    || lastAssistantMessageIsCompleteWithApprovalResponses(options),
});

document.querySelector("#composer").addEventListener("submit", (event) => {
  event.preventDefault();
  chat.sendMessage({ text: input.value });
  input.value = "";
});

function scheduleRender() { frame ||= requestAnimationFrame(render); }

function render() {
  frame = 0;
  const busy = chat.status === "submitted" || chat.status === "streaming";
  log.setAttribute("aria-busy", String(busy));  // screen readers read the answer once it is whole
  sendButton.disabled = busy;
  if (!busy) activity = "";
  activityLine.textContent = activity;
  errorLine.textContent = chat.error ? `Error: ${chat.error.message}` : "";
  const ids = new Set(chat.messages.map((message) => message.id));
  for (const [id, [, element]] of drawn) {
    if (!ids.has(id)) { element.remove(); drawn.delete(id); }
  }
  for (const message of chat.messages) {  // the chat replaces a message that changes: redraw only those
    const [before, element] = drawn.get(message.id) ?? [];
    if (before === message) continue;
    const fresh = messageElement(message);
    if (element) element.replaceWith(fresh); else log.append(fresh);
    drawn.set(message.id, [message, fresh]);
  }
}

function messageElement(message) {
  const element = el("div", { className: `message ${message.role}` },
    el("p", { className: "who", textContent: message.role === "user" ? "You" : "Agent" }));
  for (const part of message.parts) {
    if (part.type === "text") element.append(el("p", { className: "text", textContent: part.text }));
    else if (part.type.startsWith("tool-")) element.append(toolElement(part));
  }
  return element;
}

function toolElement(part) {
  const call = `${part.type.slice("tool-".length)}(${JSON.stringify(part.input ?? {})})`;
  const element = el("div", { className: "tool" }, el("code", { textContent: call }));
  if (part.state === "approval-requested") {
    const answer = (approved) => () => chat.addToolApprovalResponse({ id: part.approval.id, approved });
    // hookline: calls paused inside the sub-agent this call runs, asked on this call's part
    for (const inner of part.approval.descriptor?.calls ?? []) {
      const what = `${inner.agent} wants ${inner.toolName}(${JSON.stringify(inner.input ?? {})})`;
      element.append(el("p", { className: "inner", textContent: what }));
    }
    element.append(el("div", { className: "approval", role: "group", ariaLabel: `Run ${call}?` },
      el("button", { type: "button", textContent: "Approve", onclick: answer(true) }),
      el("button", { type: "button", textContent: "Deny", onclick: answer(false) })));
  } else {
    element.append(el("span", { textContent: ` ${outcome(part)}` }));
  }
  return element;
}

function outcome(part) {
  switch (part.state) {
    case "output-available":
      return `→ ${typeof part.output === "string" ? part.output : JSON.stringify(part.output)}`;
    case "output-error": return `failed: ${part.errorText}`;
    case "output-denied": return "denied";
    case "approval-responded": return part.approval.approved ? "approved" : "denied";
    default: return "running…";
  }
}

function el(tag, properties, ...children) {
  const element = Object.assign(document.createElement(tag), properties);
  element.append(...children);
  return element;
}
