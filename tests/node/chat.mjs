// The chat both AI SDK scripts drive: the ai package's own AbstractChat, its state a plain
// object (what useChat keeps in React state), so a script can read `messages` as the page would.
import { AbstractChat } from "ai";

class State {
  constructor() { this.status = "ready"; this.error = undefined; this.messages = []; }
  pushMessage(m) { this.messages = [...this.messages, m]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(i, m) { this.messages = this.messages.map((old, j) => (j === i ? m : old)); }
  snapshot(thing) { return structuredClone(thing); }
}

export class Chat extends AbstractChat {
  constructor(options) { super({ ...options, state: new State() }); }
}
