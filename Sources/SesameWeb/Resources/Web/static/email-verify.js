// The page a verification link lands on: the token is in the fragment (never sent to the server with the page's
// request), and nothing changes until the person confirms, with a POST the server checks like every write.

import { api } from "./api.js";
import { $, say, busy, show } from "./ui.js";
import { t } from "./i18n.js";

const token = location.hash.slice(1);

async function confirm() {
  await busy($("verify-confirm"), async () => {
    try {
      const verified = await api.emailVerify(token);
      show($("verify-confirm"), false);
      show($("verify-intro"), false);
      // The fragment has done its work: keep it out of history.
      history.replaceState(null, "", location.pathname);
      say(t("web.email-verify.confirmed", { address: verified.address }), "success");
    } catch (error) {
      say(error && error.message ? error.message : t("web.common.generic-failure"), "error");
    }
  });
}

if (!/^[A-Za-z0-9_-]{43}$/.test(token)) {
  show($("verify-confirm"), false);
  say(t("web.email-verify.incomplete"), "error");
} else {
  $("verify-confirm").addEventListener("click", confirm);
}
document.body.dataset.ready = "true";
