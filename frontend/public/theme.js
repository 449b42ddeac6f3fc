// Apply the remembered theme before first paint (no flash). A file, not an inline script: the dashboard's
// Content-Security-Policy runs only this origin's scripts (backend/app/core/headers.py).
try {
  var t = localStorage.getItem('hostbench.theme');
  if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
} catch (e) {}
