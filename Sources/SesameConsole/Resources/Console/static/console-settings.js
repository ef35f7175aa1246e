// Settings in force: read-only, with each value's source; secrets arrive masked from the server.

import { admin, el, say } from "/console/static/console.js";

let rows = [];

function show(filter) {
  const needle = filter.trim().toLowerCase();
  const shown = rows.filter(
    (row) => !needle || row.key.toLowerCase().includes(needle) || row.help.toLowerCase().includes(needle),
  );
  document.getElementById("settings").replaceChildren(
    ...shown.map((row) =>
      el(
        "tr",
        { dataset: { key: row.key } },
        el("th", { scope: "row" }, el("code", { text: row.key }), el("div", { class: "muted help", text: row.help })),
        el("td", {}, el("code", { class: row.secret ? "masked" : undefined, text: row.value })),
        el("td", { text: row.source }),
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
