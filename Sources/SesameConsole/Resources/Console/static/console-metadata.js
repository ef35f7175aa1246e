// FIDO metadata: the BLOB in force, and an upload verified by the server before it is stored.

import { admin, el, say, formatDate } from "/console/static/console.js";

function show({ blob }) {
  const list = document.getElementById("current");
  if (!blob) {
    list.replaceChildren(el("dt", { text: "None" }), el("dd", { text: "No metadata has been imported." }));
    return;
  }
  const rows = [
    ["Number", String(blob.number)],
    ["Next update", blob.nextUpdate],
    ["Entries", String(blob.entries)],
    ["Verified as of", formatDate(blob.verifiedAt)],
    ["Imported", formatDate(blob.importedAt)],
  ];
  list.replaceChildren(...rows.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]));
}

document.getElementById("upload").addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = event.currentTarget.blob.files[0];
  if (!file) return;
  try {
    say("Verifying…");
    const text = await file.text();
    show(await admin("POST", "/api/admin/metadata", { blob: text }));
    event.currentTarget.reset();
    say("The BLOB is verified and stored; every server loads it within a minute.", "success");
  } catch (error) {
    say(error.message, "error");
  }
});

admin("GET", "/api/admin/metadata")
  .then(show)
  .catch((error) => say(error.message, "error"));
