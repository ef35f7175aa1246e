// FIDO metadata: the BLOB in force, and an upload verified by the server before it is stored.

import { admin, el, say, formatDate, formatDay, formatNumber, t } from "/console/static/console.js";

function show({ blob }) {
  const list = document.getElementById("current");
  if (!blob) {
    list.replaceChildren(el("dt", { text: t("console.metadata.none") }), el("dd", { text: t("console.metadata.none-imported") }));
    return;
  }
  const rows = [
    [t("console.metadata.number"), formatNumber(blob.number)],
    [t("console.metadata.next-update"), formatDay(blob.nextUpdate)],
    [t("console.metadata.entries"), formatNumber(blob.entries)],
    [t("console.metadata.verified"), formatDate(blob.verifiedAt)],
    [t("console.metadata.imported"), formatDate(blob.importedAt)],
  ];
  list.replaceChildren(...rows.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]));
}

document.getElementById("upload").addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = event.currentTarget.blob.files[0];
  if (!file) return;
  try {
    say(t("console.metadata.verifying"));
    const text = await file.text();
    show(await admin("POST", "/api/admin/metadata", { blob: text }));
    event.currentTarget.reset();
    say(t("console.metadata.stored"), "success");
  } catch (error) {
    say(error.message, "error");
  }
});

admin("GET", "/api/admin/metadata")
  .then(show)
  .catch((error) => say(error.message, "error"));
