// @ag-ui/client's own HttpAgent against a live hookline server: node ag_ui_client.mjs <url> <thread>
// A tool run, then an approval: the interrupt outcome, and its resume built by the client's
// buildResumeArray. Prints what the client kept, as JSON, on its last line.
import { HttpAgent, buildResumeArray, getRunOutcome } from "@ag-ui/client";

const [url, threadId] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${url}/v1/ag-ui`, threadId });
let outcome;
agent.subscribers.push({ onRunFinishedEvent: ({ event }) => { outcome = getRunOutcome(event); } });

const say = async (content) => {
  agent.addMessage({ id: `u-${agent.messages.length}`, role: "user", content });
  return agent.runAgent();
};

const added = await say("add 2 and 3");
const afterAdd = structuredClone(agent.messages);
await say("danger");
const interrupt = outcome;
const resume = buildResumeArray(interrupt.interrupts, {
  [interrupt.interrupts[0].id]: { status: "resolved", payload: { approved: true } },
});
const resumed = await agent.runAgent({ resume });
console.log(JSON.stringify({
  added: added.newMessages, afterAdd, interrupt, resumed: resumed.newMessages, last: outcome,
  messages: agent.messages, state: agent.state,
}));
