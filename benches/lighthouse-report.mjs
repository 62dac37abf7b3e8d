// `node benches/lighthouse-report.mjs PAGE=REPORT.json[,REPORT.json…] ...` → the Lighthouse table of benches/lighthouse.sh:
// the four category scores per page beside the baseline and the goal, LCP / TTI / TBT, and for every
// category below 100 the audits that cost it points (id and title, from the JSON report).
import { readFileSync } from 'node:fs';
import { computeMedianRun } from 'lighthouse/core/lib/median-run.js';

function score(lhr, id) {
  return lhr.categories[id]?.score == null ? NaN : Math.round(lhr.categories[id].score * 100);
}

const CATS = [
  // id, label, baseline (issue 36's figures for /signin and /s/{token}; 75 for / in issue 13), goal
  ['performance', 'performance', '91 / 96', 98],
  ['accessibility', 'accessibility', 100, 100],
  ['best-practices', 'best practices', 100, 100],
  ['seo', 'SEO', 90, 100],
];
// PAGE=a.json,b.json,…: several runs of one page; the table shows the median run and every run's
// performance score.
const pages = process.argv.slice(2).map((arg) => {
  const i = arg.indexOf('=');
  const runs = arg.slice(i + 1).split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')));
  const perf = runs.map((r) => score(r, 'performance'));
  return { page: arg.slice(0, i), lhr: runs.length > 1 ? computeMedianRun(runs) : runs[0], perf };
});
const W = 16;
const pad = (s, w = W) => String(s).padStart(w);
const secs = (lhr, id) => {
  const v = lhr.audits[id]?.numericValue;
  return v == null ? '-' : (v / 1000).toFixed(2);
};

let out = '\n' + `Lighthouse ${pages[0].lhr.lighthouseVersion}, mobile (default)`.padEnd(40);
out += pages.map((p) => pad(p.page)).join('') + pad('baseline') + pad('goal') + '\n';
for (const [id, label, base, goal] of CATS) {
  out += label.padEnd(40) + pages.map((p) => pad(score(p.lhr, id))).join('') + pad(base) + pad(goal === 100 ? '100' : '>= ' + goal) + '\n';
}
out += `performance, every run (${pages[0].perf.length})`.padEnd(40) + pages.map((p) => pad(p.perf.join(' '))).join('') + '\n';
for (const [id, label] of [['largest-contentful-paint', 'LCP (s)'], ['interactive', 'TTI (s)'], ['total-blocking-time', 'TBT (s)']]) {
  out += label.padEnd(40) + pages.map((p) => pad(secs(p.lhr, id))).join('') + pad('-') + pad('-') + '\n';
}
for (const [id, label, , goal] of CATS) {
  out += `goal: ${label} ${goal === 100 ? '100' : '>= ' + goal}`.padEnd(40)
    + pages.map((p) => pad(score(p.lhr, id) >= goal ? 'met' : 'NOT met')).join('') + '\n';
}
// Issue 36: the page is painted within a second and quiet (blocking the main thread for at most
// 100 ms in all) on a mid-range phone.
for (const [id, label, limit] of [['largest-contentful-paint', 'LCP <= 1.0 s', 1000], ['total-blocking-time', 'TBT <= 0.1 s', 100]]) {
  out += `goal: ${label}`.padEnd(40)
    + pages.map((p) => pad((p.lhr.audits[id]?.numericValue ?? Infinity) <= limit ? 'met' : 'NOT met')).join('') + '\n';
}
const warnings = pages.flatMap((p) => (p.lhr.runWarnings || []).map((w) => `  ${p.page}: ${w}`));
if (warnings.length) out += '\nLighthouse warnings:\n' + warnings.join('\n') + '\n';

// The audits behind every score below 100.
let failing = '';
for (const { page, lhr } of pages) {
  for (const [id, label] of CATS) {
    const cat = lhr.categories[id];
    if (!cat || cat.score === 1) continue;
    const rows = cat.auditRefs
      .map((ref) => ({ ref, a: lhr.audits[ref.id] }))
      .filter(({ a }) => a && a.score !== null && a.score < 1
        && !['informative', 'notApplicable', 'manual', 'error'].includes(a.scoreDisplayMode))
      .filter(({ ref, a }) => id !== 'performance' || ref.weight > 0 || a.score < 0.9)
      .sort((x, y) => y.ref.weight - x.ref.weight || x.a.score - y.a.score);
    failing += `\n${page} ${label} ${score(lhr, id)}: failing audits\n`;
    for (const { ref, a } of rows) {
      const dv = a.displayValue ? ` (${a.displayValue})` : '';
      failing += `  ${a.id.padEnd(36)} score ${String(Math.round(a.score * 100)).padStart(3)}  weight ${String(ref.weight).padStart(2)}  ${a.title}${dv}\n`;
    }
    if (!rows.length) failing += '  (none listed with a score below 1)\n';
  }
}
process.stdout.write(out + failing);
