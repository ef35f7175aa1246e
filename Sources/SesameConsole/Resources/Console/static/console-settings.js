// Settings in force: read-only, with each value's source; secrets arrive masked from the server.

import { admin, el, say, t } from "/console/static/console.js";

// Where a value came from: `default`, `unknown`, or a kind (`flag`, `environment`, `file`) and its name.
function sourceText(source) {
  if (source === "default") return t("console.settings.source-default");
  if (source === "unknown") return t("console.settings.source-unknown");
  const space = source.indexOf(" ");
  const kind = space < 0 ? source : source.slice(0, space);
  const name = space < 0 ? "" : source.slice(space + 1);
  switch (kind) {
    case "flag": return t("console.settings.source-flag", { name });
    case "environment": return t("console.settings.source-environment", { name });
    case "file": return t("console.settings.source-file", { name });
    default: return source;
  }
}

// A setting's help in the page's language: the catalog's `console.setting-help.<key>`, or the API's English
// sentence when the catalog has no such key (`t` gives the key back then), e.g. a setting newer than the catalog.
function helpText(row) {
  const key = `console.setting-help.${row.key}`;
  const text = t(key);
  return text === key ? row.help : text;
}

let rows = [];

function show(filter) {
  const needle = filter.trim().toLowerCase();
  const shown = rows.filter(
    (row) =>
      !needle ||
      row.key.toLowerCase().includes(needle) ||
      row.help.toLowerCase().includes(needle) ||
      helpText(row).toLowerCase().includes(needle),
  );
  document.getElementById("settings").replaceChildren(
    ...shown.map((row) =>
      el(
        "tr",
        { dataset: { key: row.key } },
        el(
          "th",
          { scope: "row" },
          el("code", { text: row.key }),
          el("div", { class: "muted help", text: helpText(row) }),
        ),
        row.none
          ? el("td", { class: "muted", text: t("console.settings.none") })
          : el("td", {}, el("code", { class: row.secret ? "masked" : undefined, text: row.value })),
        el("td", {}, sourceText(row.source)),
      ),
    ),
  );
}

document.getElementById("filter").addEventListener("input", (event) => show(event.target.value));

admin("GET", "/api/admin/settings")
  .then(({ settings }) => {
    rows = settings;
    show(document.getElementById("filter").value);
  })
  .catch((error) => say(error.message, "error"));
