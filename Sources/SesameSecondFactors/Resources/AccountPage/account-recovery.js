// Account page, the recovery codes card (SesameSecondFactors): how many are left, and a new set shown once.

import { call } from "./api.js";
import { $, say, busy, focus, show, el } from "./ui.js";
import { t, tn } from "./i18n.js";
import { section, loadAccount, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  recoveryCodes: () => call("POST", "/api/account/recovery-codes", {}),
};

function render(account) {
  const remaining = account.recoveryCodesRemaining || 0;
  $("recovery-status").textContent =
    remaining > 0
      ? tn("web.account.recovery.remaining", remaining)
      : t("web.account.recovery.none");
}

function showRecoveryCodes(codes) {
  const list = $("recovery-list");
  list.replaceChildren(...codes.map((code) => el("li", {}, el("code", { text: code }))));
  show($("recovery-codes"), true);
}

async function generateRecoveryCodes() {
  await busy($("recovery-generate"), async () => {
    try {
      const result = await endpoints.recoveryCodes();
      const codes = Array.isArray(result && result.codes) ? result.codes : [];
      showRecoveryCodes(codes);
      await loadAccount();
      say(t("web.account.recovery.created"), "success");
      focus($("recovery-heading"));
    } catch (error) {
      failed(error);
    }
  });
}

section({
  name: "recovery",
  anchor: "recovery",
  wire: () => $("recovery-generate").addEventListener("click", generateRecoveryCodes),
  render,
});
