// Account page: the part every section shares. Each card of the page belongs to the server feature that serves its
// API, and so does its script (`account-<section>.js`, which the page loads after this one): it registers itself
// here with `section`. Once the page is parsed, this script wires every section, reads the account and gives it to
// each, loads each in page order, and then runs what comes after the page is ready (the Signal API, the passkey
// offer after a password sign-in).

import { api, setCSRFToken } from "./api.js";
import { $, say, focus } from "./ui.js";
import { t, formatDateIn } from "./i18n.js";

/** The account as GET /api/account last answered (null before the first answer). */
export let account = null;

/**
 * The sections, in page order. Each is `{ name, anchor, wire(), render(account), load(), ready() }`, every member
 * optional: `wire` adds its listeners, `render` shows what the account document says, `load` reads the section's
 * own endpoint, `ready` runs once the page is ready; `anchor` is the card's id that `#<anchor>` in the address
 * moves the focus to (its heading, `<anchor>-heading`).
 */
const sections = [];

/** Adds a section of the page (its script calls this when it is evaluated, in page order). */
export function section(part) {
  sections.push(part);
}

/** A date and time in the page's language; "never" when there is none. */
export function formatDate(value) {
  return value ? formatDateIn(value) : t("web.account.never");
}

export function failed(error) {
  if (error && error.code === "unauthenticated") {
    location.assign("/signin");
    return;
  }
  say(error && error.message ? error.message : t("web.account.failed"), "error");
}

/**
 * What the Signal API should send (GET /api/account/signals): the credential IDs the server accepts now and the
 * account's current names. A failure to fetch them only means the browser's list catches up later.
 */
export async function signals() {
  try {
    return await api.signals();
  } catch {
    return null;
  }
}

/** Reads the account again and shows it in every section. */
export async function loadAccount() {
  account = await api.account();
  setCSRFToken(account.csrfToken);
  for (const part of sections) if (part.render) part.render(account);
}

/** Loads the section `name` again (the sessions after a password change signed the others out). */
export async function reload(name) {
  const part = sections.find((each) => each.name === name);
  if (part && part.load) await part.load();
}

async function start() {
  for (const part of sections) if (part.wire) part.wire();
  try {
    await loadAccount();
  } catch (error) {
    return failed(error);
  }
  // Sections whose endpoints fail stay visible with a message; the rest of the page keeps working.
  for (const part of sections) {
    if (!part.load) continue;
    try {
      await part.load();
    } catch (error) {
      failed(error);
    }
  }
  document.body.dataset.ready = "true";
  const anchored = sections.find((part) => part.anchor && location.hash === `#${part.anchor}`);
  if (anchored) focus($(`${anchored.anchor}-heading`));
  for (const part of sections) if (part.ready) await part.ready();
}

// The sections' scripts come after this one in the page and register as they are evaluated: the page's module
// scripts are deferred, and all of them run, in order, before the document's DOMContentLoaded.
document.addEventListener("DOMContentLoaded", start, { once: true });
