// Account page, the language card (SesameAccount): the saved choice of the pages' language.

import { call } from "./api.js";
import { $, busy, focus, el } from "./ui.js";
import { languages } from "./i18n.js";
import { section, failed } from "./account.js";

/** The shipped languages in their own names, and "your browser's choice"; the saved one selected. */
function render(account) {
  const select = $("language-select");
  if (select.options.length === 1) {
    for (const language of languages) {
      const option = el("option", { value: language.tag, text: language.name });
      option.lang = language.tag;
      select.append(option);
    }
  }
  select.value = typeof account.language === "string" ? account.language : "";
}

/** Saves the choice (or clears it) and reloads: the page then comes in the language chosen. */
async function saveLanguage(event) {
  event.preventDefault();
  const value = $("language-select").value;
  await busy($("language-save"), async () => {
    try {
      await call("PUT", "/api/account/language", { language: value === "" ? null : value });
      location.reload();
    } catch (error) {
      failed(error);
      focus($("language-select"));
    }
  });
}

section({
  name: "language",
  anchor: "language",
  wire: () => $("language-form").addEventListener("submit", saveLanguage),
  render,
});
