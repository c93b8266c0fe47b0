// toolhost guide: a "Copy" button on every example (no inline script: CSP script-src 'self').
for (const pre of document.querySelectorAll("pre.code")) {
  const status = document.createElement("span");
  status.className = "copied";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy";
  const name = pre.dataset.file || pre.dataset.title || "example";
  button.textContent = "Copy";
  button.setAttribute("aria-label", `Copy ${name}`);
  button.addEventListener("click", async () => {
    const text = pre.textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = document.createElement("textarea");
      area.value = text;
      area.className = "sr-only";
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    status.textContent = "Copied";
    setTimeout(() => { status.textContent = ""; }, 2000);
  });
  pre.tabIndex = 0;
  pre.setAttribute("aria-label", pre.dataset.file ? `File ${pre.dataset.file}` : `Example: ${name}`);
  const bar = document.createElement("div");
  bar.className = "code-bar";
  if (pre.dataset.file) {
    const label = document.createElement("span");
    label.className = "file";
    label.textContent = pre.dataset.file;
    bar.append(label);
  }
  bar.append(button, status);
  pre.before(bar);
}
