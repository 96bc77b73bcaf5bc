// The composer's attachments: files picked with Attach, pasted or dropped, shown as chips
// (each removable, by mouse or keyboard) until the message is sent, then sent with it as
// base64 `attachments` of the run's body: images as images, anything else as files.

import { $, bytes, el } from "./dom.js";

export class Attachments {
  // problem(message): say why a file was not attached
  constructor({ problem }) {
    this.problem = problem;
    this.items = [];
  }

  // Attach (its hidden file input), a paste into the prompt, a drop on the composer: each adds its files.
  wire() {
    $("attach").addEventListener("click", () => $("attach-input").click());
    $("attach-input").addEventListener("change", async (event) => {
      await this.add([...event.target.files]);
      event.target.value = ""; // the same file can be picked again
      $("prompt").focus();
    });
    $("prompt").addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files || [])];
      if (!files.length) return;
      if (!event.clipboardData.getData("text/plain")) event.preventDefault();
      this.add(files);
    });
    $("composer").addEventListener("dragover", (event) => event.preventDefault());
    $("composer").addEventListener("drop", (event) => {
      const files = [...(event.dataTransfer?.files || [])];
      if (!files.length) return;
      event.preventDefault();
      this.add(files);
    });
  }

  get count() {
    return this.items.length;
  }

  async add(files) {
    for (const file of files) {
      if (!file.size) {
        this.problem(`${file.name || "The pasted file"} is empty: nothing to attach.`);
        continue;
      }
      let data;
      try {
        data = await base64Of(file);
      } catch {
        this.problem(`${file.name || "The pasted file"} could not be read.`);
        continue;
      }
      const mediaType = file.type || "application/octet-stream";
      const preview = mediaType.startsWith("image/") ? URL.createObjectURL(file) : null;
      this.items.push({ name: file.name || "pasted image", mediaType, size: file.size, data, preview });
    }
    this.render();
  }

  // The run body's `attachments`.
  payload() {
    return this.items.map(({ name, mediaType, data }) => (mediaType.startsWith("image/")
      ? { type: "image", media_type: mediaType, data }
      : { type: "file", media_type: mediaType, data, name }));
  }

  // Forget what was sent (anything attached while it was sending stays).
  drop(sent) {
    for (const item of sent) this.release(item);
    this.items = this.items.filter((item) => !sent.includes(item));
    this.render();
  }

  remove(item) {
    const index = this.items.indexOf(item);
    this.drop([item]);
    const buttons = $("attachments").querySelectorAll("button.remove");
    (buttons[Math.min(index, buttons.length - 1)] || $("attach")).focus();
  }

  release(item) {
    if (item.preview) URL.revokeObjectURL(item.preview);
  }

  render() {
    const list = $("attachments");
    list.replaceChildren(...this.items.map((item) => this.chip(item)));
    list.hidden = !this.items.length;
  }

  chip(item) {
    const remove = el("button", { type: "button", class: "remove", "aria-label": `Remove ${item.name}` }, "×");
    remove.addEventListener("click", () => this.remove(item));
    return el("li", { class: "attachment" },
      item.preview ? el("img", { src: item.preview, alt: "", class: "thumb" }) : null,
      el("span", { class: "name" }, item.name),
      el("span", { class: "facts" }, ` · ${item.mediaType} · ${bytes(item.size)}`), remove);
  }
}

function base64Of(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).slice(String(reader.result).indexOf(",") + 1));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
