// The consent page works without script (a plain form); this only puts the focus on the first choice.

const allow = document.getElementById("consent-allow");
if (allow) allow.focus();
