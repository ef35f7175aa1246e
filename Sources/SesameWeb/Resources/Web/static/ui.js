// Small page helpers: messages read out by screen readers, busy buttons, focus moves.

import { t, formatDateIn } from "./i18n.js";

export function $(id) {
  return document.getElementById(id);
}

/** Shows `text` in the page's live region; `kind` is "error", "success" or "info". */
export function say(text, kind = "info") {
  const box = $("message");
  if (!box) return;
  box.textContent = text || "";
  box.dataset.kind = kind;
  box.setAttribute("role", kind === "error" ? "alert" : "status");
}

export function clear() {
  say("");
}

/** Runs `work` with `button` disabled and marked busy; the button comes back even if `work` throws. */
export async function busy(button, work) {
  if (button) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
  }
  try {
    return await work();
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }
}

export function focus(element) {
  if (element && typeof element.focus === "function") element.focus();
}

export function show(element, visible) {
  if (element) element.hidden = !visible;
}

/** `<el class=...>text</el>` without parsing HTML. */
export function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A date and time in the page's language; "never" for none. */
export function formatDate(value) {
  if (!value) return t("web.common.never");
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return t("web.common.unknown");
  return formatDateIn(date, { dateStyle: "medium", timeStyle: "short" });
}
