/* convoy's report page: draws the analysis embedded in the page (the JSON the
 * JSON renderers write; docs/viewer.md) with plain DOM and SVG.
 *
 * Every string from the profiled program (thread, lock and symbol names, file
 * paths, command lines) reaches the page only as a text node or an attribute
 * value set with setAttribute: nothing is ever parsed as HTML, so a thread
 * named "<img src=x onerror=alert(1)>" is shown as those characters. */
'use strict';
(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';

  // ---- DOM helpers: the only way the page makes elements ----------------
  function add(parent, kids) {
    for (const k of kids) {
      if (k === null || k === undefined || k === false) continue;
      if (Array.isArray(k)) add(parent, k);
      else if (k instanceof Node) parent.appendChild(k);
      else parent.appendChild(document.createTextNode(String(k)));
    }
    return parent;
  }
  function setAttrs(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    }
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    return add(e, kids);
  }
  function sv(tag, attrs, ...kids) {
    const e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    return add(e, kids);
  }

  // ---- formatting --------------------------------------------------------
  function sig(x) { return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2); }
  function fmtNs(ns) {
    if (ns === null || ns === undefined || Number.isNaN(ns)) return '—';
    const a = Math.abs(ns);
    if (a < 1e3) return Math.round(ns) + ' ns';
    if (a < 1e6) return sig(ns / 1e3) + ' µs';
    if (a < 1e9) return sig(ns / 1e6) + ' ms';
    return sig(ns / 1e9) + ' s';
  }
  function fmtCount(n) {
    if (n === null || n === undefined) return '—';
    return Number(n).toLocaleString('en-US');
  }
  function fmtPct(f) {
    if (f === null || f === undefined || !Number.isFinite(f)) return '—';
    if (f > 0 && f < 0.001) return '<0.1%';
    return (f * 100).toFixed(f < 0.1 ? 1 : 0) + '%';
  }
  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }
  function fmtSpeedup(s) { return (s >= 0.1 || s === 0 ? s.toFixed(2) : s.toPrecision(2)) + '×'; }

  // The speedup stack's components (analyzer/stack.h), in drawing order.
  const COMPONENTS = [
    ['useful', 'useful on-CPU work', '#43a047'],
    ['inflation', 'on-CPU time beyond the reference run', '#fb8c00'],
    ['lock_wait', 'waiting for locks', '#e53935'],
    ['park', 'parked (condvars, semaphores, futexes)', '#8e24aa'],
    ['barrier', 'waiting at barriers and joins', '#3949ab'],
    ['runnable', 'runnable but not running (no CPU)', '#fdd835'],
    ['other_offcpu', 'off-CPU for other reasons', '#90a4ae'],
    ['idle', 'idle slots (fewer threads had work)', '#dcdfe4'],
    ['unexplained', 'unexplained', '#795548'],
  ];
  const STACK_META = new Set(['threads', 'wall_ns', 'budget_ns']);
  // Trace waits by object kind: the stack component each belongs to.
  const WAIT_COMPONENT = { mutex: 'lock_wait', rwlock: 'lock_wait', spinlock: 'lock_wait', condvar: 'park', semaphore: 'park', futex: 'park', barrier: 'barrier' };
  const HOLD = '#ffab91';
  function stackParts(stack) {
    stack = stack || {};
    const known = new Map(COMPONENTS.map(c => [c[0], c]));
    const parts = COMPONENTS.filter(c => c[0] in stack).map(c => ({ key: c[0], label: c[1], color: c[2], ns: stack[c[0]] || 0 }));
    for (const k of Object.keys(stack))   // components a newer analyzer adds
      if (!known.has(k) && !STACK_META.has(k) && typeof stack[k] === 'number')
        parts.push({ key: k, label: k.replace(/_/g, ' '), color: '#b0bec5', ns: stack[k] });
    return parts;
  }
  function legend(parts) {
    return el('div', { class: 'legend' }, parts.map(p => el('span', { style: '--swatch:' + p.color }, p.label)));
  }

  function section(id, title, ...kids) {
    return el('section', { id: id }, el('h2', null, title), kids);
  }
  function absent(text) { return el('p', { class: 'absent' }, text); }
  function note(text) { return el('p', { class: 'note' }, text); }

  // ---- tables: sortable, filterable, rows that open -----------------------
  // columns: {label, get(row) -> sortable value, fmt(value,row) -> text|Node, text: left-aligned}
  function table(columns, rows, opts) {
    opts = opts || {};
    let sortCol = opts.sort === undefined ? -1 : opts.sort, desc = true, filter = '';
    const tbody = el('tbody');
    const sortBy = i => { if (sortCol === i) desc = !desc; else { sortCol = i; desc = !columns[i].text; } draw(); };
    const heads = columns.map((c, i) => el('th', {
      class: (c.text ? 'text ' : '') + 'sortable', title: 'sort by ' + c.label, tabindex: 0,
      onclick: () => sortBy(i), onkeydown: e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(i); } },
    }, c.label));
    function draw() {
      heads.forEach((h, i) => {
        if (i === sortCol) h.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
        else h.removeAttribute('aria-sort');
      });
      let shown = rows.filter(r => !filter || (opts.search ? opts.search(r) : '').toLowerCase().includes(filter));
      if (sortCol >= 0) {
        const get = columns[sortCol].get;
        shown = shown.slice().sort((a, b) => {
          const x = get(a), y = get(b);
          let c;
          if (typeof x === 'string' || typeof y === 'string') c = String(x ?? '').localeCompare(String(y ?? ''));
          else {   // a missing number (null: not measured) sorts below every number
            const u = x ?? -Infinity, v = y ?? -Infinity;
            c = u < v ? -1 : u > v ? 1 : 0;
          }
          return desc ? -c : c;
        });
      }
      tbody.replaceChildren();
      for (const r of shown) {
        const tr = el('tr', { class: opts.detail ? 'expander' : null },
          columns.map(c => { const v = c.get(r);   // data-value: the number a formatted cell shows
            return el('td', { class: (c.text ? 'text' : '') + (c.mono ? ' name' : ''), 'data-value': typeof v === 'number' ? v : null },
              c.fmt ? c.fmt(v, r) : v); }));
        tbody.appendChild(tr);
        if (opts.detail) {
          const d = el('tr', { class: 'detail', hidden: true }, el('td', { colspan: columns.length }));
          let built = false;
          const toggle = () => {
            if (!built) { add(d.firstChild, opts.detail(r)); built = true; }
            d.hidden = !d.hidden;
            tr.setAttribute('aria-expanded', String(!d.hidden));
          };
          setAttrs(tr, { title: 'click for call stacks and threads', tabindex: 0, 'aria-expanded': 'false' });
          tr.addEventListener('click', toggle);
          tr.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); } });
          tbody.appendChild(d);
        }
      }
      if (!shown.length)
        tbody.appendChild(el('tr', null, el('td', { class: 'text', colspan: columns.length },
          rows.length ? 'No row matches the filter.' : (opts.empty || 'None.'))));
    }
    draw();
    const box = el('div', { class: 'tablebox' });
    if (opts.search)
      add(box, [el('div', { class: 'controls' }, el('input', {
        type: 'search', placeholder: opts.placeholder || 'filter', 'aria-label': 'filter rows',
        oninput: e => { filter = e.target.value.toLowerCase(); draw(); },
      }), el('span', { class: 'note' }, plural(rows.length, 'row') + '; click a heading to sort'))]);
    add(box, [el('div', { class: 'scroll' }, el('table', null, el('thead', null, el('tr', null, heads)), tbody))]);
    return box;
  }

  function siteText(site) {
    if (!site) return '';
    const fn = site.function || site.addr || '?';
    return site.file ? fn + ' (' + site.file + ':' + (site.line || '?') + ')' : fn;
  }
  function stackList(stacks) {
    if (!stacks || !stacks.length) return note('No call stack was recorded for this object.');
    return stacks.map((s, i) => el('div', { class: 'stack' },
      el('div', { class: 'stackhead' }, 'stack ' + (i + 1) + ': ' +
        (s.waits !== undefined ? fmtCount(s.waits) + ' waits, ' : '') +
        (s.wait_ns !== undefined ? fmtNs(s.wait_ns) + ' waited' : '') +
        (s.share !== undefined ? ' (' + fmtPct(s.share) + ')' : '')),
      (s.frames || []).map(f => el('div', { class: 'frame' + (f.runtime ? ' runtime' : '') },
        (f.function || f.addr || '??') + (f.inlined ? ' (inlined)' : ''),
        el('span', { class: 'loc' }, f.file ? '  ' + (f.path || f.file) + ':' + f.line : f.module ? '  ' + f.module + '+' + f.offset : '')))));
  }
  function threadSplit(obj, report, cols) {
    if (!obj.threads || !obj.threads.length) return null;
    const names = new Map((report.threads || []).map(t => [t.index, t.name]));
    return [el('h3', null, 'Per thread'), table(
      [{ label: 'thread', text: true, mono: true, get: t => (names.get(t.thread) || '') + ' (tid ' + t.tid + ')' }].concat(cols),
      obj.threads, { sort: 1 })];
  }

  // ---- charts ------------------------------------------------------------
  // Speedups are relative to the reference (smallest) count, so ideal is
  // n / ref: the line from (ref, 1) to (max, max / ref).
  function speedupChart(series, cpus) {
    const W = 420, H = 300, L = 44, R = 16, T = 14, B = 40;
    const all = series.flatMap(s => s.runs.map(r => r.threads));
    const maxN = Math.max(...all, 1), ref = Math.min(...all, maxN);
    const maxS = Math.max(maxN / ref, ...series.flatMap(s => s.runs.map(r => r.speedup || 0))) * 1.05;
    const x = n => L + (maxN === ref ? 0.5 : (n - ref) / (maxN - ref)) * (W - L - R);
    const y = s => H - B - (s / maxS) * (H - T - B);
    const g = sv('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'speedup against thread count' });
    const step = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100].find(st => maxS / st <= 8) || 200;
    for (let v = 0; v <= maxS; v += step)
      add(g, [sv('line', { class: 'grid', x1: L, x2: W - R, y1: y(v), y2: y(v) }),
        sv('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, (step < 1 ? v.toFixed(2) : v) + '×')]);
    const counts = [...new Set(series.flatMap(s => s.runs.map(r => r.threads)))].sort((a, b) => a - b);
    for (const n of counts)
      add(g, [sv('text', { x: x(n), y: H - B + 16, 'text-anchor': 'middle' }, n)]);
    add(g, [sv('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle' }, 'threads'),
      sv('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }),
      sv('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }),
      sv('path', { class: 'ideal', d: `M${x(ref)},${y(1)} L${x(maxN)},${y(maxN / ref)}` },
        sv('title', null, `ideal: ${ref > 1 ? 'the thread count over ' + ref : 'speedup equal to the thread count'}`)),
      sv('text', { x: x(maxN) - 4, y: y(maxN / ref) - 6, 'text-anchor': 'end' }, 'ideal')]);
    if (cpus && cpus > ref && cpus < maxN)
      add(g, [sv('line', { class: 'grid', x1: x(cpus), x2: x(cpus), y1: T, y2: H - B, 'stroke-dasharray': '2 3', style: 'stroke:#9aa3b2' }),
        sv('text', { x: x(cpus) + 4, y: T + 10 }, cpus + ' CPUs')]);
    // With two series, the higher point of each count is labelled above, the lower below.
    const other = (k, n) => { const o = series[1 - k]; const r = o && o.runs.find(r => r.threads === n); return r ? r.speedup : -Infinity; };
    series.forEach((s, k) => {
      const runs = s.runs.slice().sort((a, b) => a.threads - b.threads);
      add(g, [sv('path', { class: k ? 'measured-b' : 'measured', d: runs.map((r, i) => (i ? 'L' : 'M') + x(r.threads) + ',' + y(r.speedup)).join(' ') })]);
      for (const r of runs)
        add(g, [sv('circle', { class: k ? 'pt-b' : 'pt', cx: x(r.threads), cy: y(r.speedup), r: 4 },
          sv('title', null, `${s.label ? s.label + ': ' : ''}${plural(r.threads, 'thread')}: ${fmtSpeedup(r.speedup)} (wall ${fmtNs(r.wall_ns)})`)),
        sv('text', { class: 'label', x: x(r.threads) + (r.threads === maxN ? -6 : 6), y: y(r.speedup) + (r.speedup >= other(k, r.threads) ? -8 : 16),
          'text-anchor': r.threads === maxN ? 'end' : 'start' }, fmtSpeedup(r.speedup))]);
    });
    return g;
  }

  // One horizontal bar per run, its length the worker-time budget N·T(N).
  function stackChart(bars) {
    const W = 640, L = 118, R = 86, rowH = 26, T = 6;
    const H = T + bars.length * rowH + 4;
    const max = Math.max(...bars.map(b => b.budget), 1);
    const g = sv('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', style: `max-width:${W}px`, role: 'img', 'aria-label': 'speedup stack per thread count' });
    bars.forEach((b, i) => {
      const yy = T + i * rowH;
      add(g, [sv('text', { class: 'label', x: L - 8, y: yy + 15, 'text-anchor': 'end' }, b.label)]);
      let x0 = L;
      for (const p of b.parts) {
        const w = (p.ns / max) * (W - L - R);
        if (w <= 0) continue;
        add(g, [sv('rect', { x: x0, y: yy + 3, width: Math.max(w, 0.5), height: rowH - 8, fill: p.color },
          sv('title', null, `${b.label}: ${p.label}: ${fmtNs(p.ns)} (${fmtPct(p.ns / b.budget)} of ${fmtNs(b.budget)})`))]);
        x0 += w;
      }
      add(g, [sv('text', { x: x0 + 6, y: yy + 15 }, fmtNs(b.budget))]);
    });
    return g;
  }

  // ---- sections ------------------------------------------------------------
  function topParts(stack, n) {
    const budget = stack.budget_ns || stackParts(stack).reduce((s, p) => s + p.ns, 0);
    return stackParts(stack).filter(p => p.ns > 0).sort((a, b) => b.ns - a.ns).slice(0, n)
      .map(p => fmtPct(p.ns / budget) + ' ' + p.label).join(', ');
  }
  function verdict(view) {
    const s = section('verdict', 'Verdict');
    const box = el('div', { class: 'verdict' });
    if (view.sweep) {
      const steps = (view.sweep.steps || []).filter(Boolean);
      if (steps.length) add(box, steps.map(t => el('p', { class: 'step' }, t)));
      else add(box, [el('p', null, 'The sweep has one thread count: there is no step to explain.')]);
    } else {
      const st = view.reports[0].report.stack || {};
      add(box, [el('p', { class: 'step' }, `${plural(st.threads || 0, 'busy thread')}, wall time ${fmtNs(st.wall_ns)}: ` +
        `of the worker time, ${topParts(st, 3)}.`),
      el('p', { class: 'note' }, 'A single profile has no 1-thread reference; `convoy scale` measures the speedup and explains each step.')]);
    }
    const f = (view.findings || [])[0];
    if (f) add(box, [el('p', { class: 'lead' }, f.summary), f.fix ? el('p', { class: 'fix' }, 'Fix: ' + f.fix) : null]);
    else add(box, [el('p', null, 'No finding: nothing measured explains lost time.')]);
    return add(s, [box]);
  }

  function curveSection(view) {
    const s = section('speedup', 'Speedup against ideal');
    if (!view.sweep) return add(s, [absent('Not measured in this profile: a speedup curve needs runs at several thread counts (convoy scale --threads 1,2,4 -- CMD {threads}).')]);
    const sw = view.sweep;
    const ref = sw.reference_threads || Math.min(...sw.runs.map(r => r.threads));
    add(s, [note((sw.throughput_from_progress ? `Speedup is throughput (progress points per second) against the ${ref}-thread run's, `
      : `Speedup is the ${ref}-thread wall time over the wall time, `) +
      `median of ${plural(sw.repeat || 1, 'run')} per count, on ${plural(sw.cpus || 0, 'CPU')}.`),
    speedupChart([{ runs: sw.runs }], sw.cpus)]);
    return s;
  }

  function stackSection(view) {
    const s = section('stack', 'Where the worker time went (speedup stack)');
    const st = view.reports[0].report.stack || {};
    const runs = view.sweep ? view.sweep.runs : [{ threads: st.threads, stack: st, budget_ns: st.budget_ns, wall_ns: st.wall_ns }];
    const bars = runs.map(r => ({ label: plural(r.threads, 'thread'), budget: r.budget_ns || stackParts(r.stack).reduce((a, p) => a + p.ns, 0), parts: stackParts(r.stack) }));
    add(s, [note('Each bar is the worker-time budget N × wall time, split into what the threads spent it on; a perfectly scaling program keeps the useful part constant and every bar as long as the first.'),
      stackChart(bars), legend(stackParts(runs[0].stack))]);
    return s;
  }

  function findingCard(f) {
    const sev = ['high', 'medium', 'low'].includes(f.severity) ? f.severity : 'low';
    const ev = f.evidence || {};
    return el('div', { class: 'finding ' + sev },
      el('div', { class: 'head' }, el('span', { class: 'sev ' + sev }, f.severity || '?'),
        el('span', { class: 'kind' }, f.kind || '?'),
        f.suspected ? el('span', { class: 'badge' }, 'suspected') : null,
        f.external ? el('span', { class: 'badge' }, 'outside the program') : null,
        el('span', { class: 'share' }, el('span', { class: 'sharebar' }, el('i', { style: 'width:' + Math.min(100, (f.share || 0) * 100).toFixed(1) + '%' })),
          ' explains ' + fmtPct(f.share) + ' of the lost time' + (f.threads ? ' at ' + plural(f.threads, 'thread') : ''))),
      el('p', { class: 'summary' }, f.summary || ''),
      f.fix ? el('p', { class: 'fix' }, f.fix) : null,
      el('details', null, el('summary', null, 'evidence'),
        el('dl', { class: 'kv' },
          (f.objects || []).length ? [el('dt', null, 'objects'), el('dd', null, f.objects.join(', '))] : null,
          f.wall_ns ? [el('dt', null, 'wall time'), el('dd', null, fmtNs(f.wall_ns))] : null,
          f.predicted_wall_ns ? [el('dt', null, 'predicted wall time if fixed'), el('dd', null, fmtNs(f.predicted_wall_ns))] : null,
          Object.entries(ev).map(([k, v]) => [el('dt', null, k.replace(/_/g, ' ')),
            el('dd', null, typeof v === 'number' ? (k.endsWith('_ns') ? fmtNs(v) : k.endsWith('fraction') || k === 'utilization' ? fmtPct(v) : fmtCount(Math.round(v * 1000) / 1000)) : JSON.stringify(v))]))));
  }
  function findingsSection(findings, id) {
    const s = section(id || 'findings', 'Findings');
    if (!findings || !findings.length) return add(s, [absent('No finding: nothing measured explains lost time.')]);
    return add(s, [note('Most important first; the share is the fraction of the lost time each one explains.'), findings.map(findingCard)]);
  }

  // A futex word is seen only when a thread waits on it: its acquisitions
  // are its woken waits, how often it is taken is unknown (docs/report-json.md).
  const acquisitionsSeen = l => l.kind !== 'futex';
  function lockSection(report) {
    const s = section('locks', 'Locks');
    const locks = report.locks || [];
    const cols = [
      { label: 'lock', text: true, mono: true, get: l => l.name },
      { label: 'kind', text: true, get: l => l.kind + (l.type && l.type !== 'normal' ? ' (' + l.type + ')' : '') },
      { label: 'acquisitions', get: l => acquisitionsSeen(l) ? l.acquisitions : null, fmt: fmtCount },
      { label: 'contended', get: l => l.contended, fmt: fmtCount },
      { label: 'contended %', get: l => !acquisitionsSeen(l) ? null : l.acquisitions ? l.contended / l.acquisitions : 0, fmt: fmtPct },
      { label: 'wait', get: l => l.wait_ns, fmt: fmtNs },
      { label: 'max wait', get: l => l.max_wait_ns, fmt: fmtNs },
      { label: 'avg hold', get: l => l.hold_avg_ns, fmt: fmtNs },
      { label: 'hand-offs', get: l => l.handoffs, fmt: fmtCount },
      { label: 'site', text: true, mono: true, get: l => siteText(l.site) },
    ];
    const detail = l => [
      el('dl', { class: 'kv' }, el('dt', null, 'address'), el('dd', null, l.addr + (l.destroyed ? ' (destroyed)' : '')),
        l.first_use ? [el('dt', null, 'first used at'), el('dd', null, siteText(l.first_use.site))] : null,
        l.avg_wake_latency_ns !== undefined ? [el('dt', null, 'wake latency'), el('dd', null, 'avg ' + fmtNs(l.avg_wake_latency_ns) + ', max ' + fmtNs(l.max_wake_latency_ns))] : null),
      el('h3', null, 'Call stacks that waited'), stackList(l.stacks),
      threadSplit(l, report, [
        { label: 'acquisitions', get: t => acquisitionsSeen(l) ? t.acquisitions : null, fmt: fmtCount },
        { label: 'contended', get: t => t.contended, fmt: fmtCount },
        { label: 'wait', get: t => t.wait_ns, fmt: fmtNs }]),
    ];
    return add(s, [table(cols, locks, {
      sort: 5, detail, placeholder: 'filter by name, kind or call site',
      search: l => [l.name, l.kind, l.type, siteText(l.site), (l.stacks || []).flatMap(st => (st.frames || []).map(f => f.function)).join(' ')].join(' '),
      empty: 'No lock was used.',
    })]);
  }

  function syncSection(report) {
    const s = section('sync', 'Condition variables, futexes, semaphores and barriers');
    const rows = [].concat(report.condvars || [], report.futexes || [], report.semaphores || [], report.barriers || []);
    const cols = [
      { label: 'object', text: true, mono: true, get: o => o.name },
      { label: 'kind', text: true, get: o => o.kind },
      { label: 'waits', get: o => o.waits, fmt: fmtCount },
      { label: 'wait', get: o => o.wait_ns, fmt: fmtNs },
      { label: 'max wait', get: o => o.max_wait_ns, fmt: fmtNs },
      { label: 'wakeups', get: o => o.wakeups, fmt: fmtCount },
      { label: 'avg wake latency', get: o => o.avg_wake_latency_ns, fmt: fmtNs },
      { label: 'max wake latency', get: o => o.max_wake_latency_ns, fmt: fmtNs },
      { label: 'signals', get: o => (o.signals || 0) + (o.broadcasts || 0), fmt: fmtCount },
      { label: 'unwaited', get: o => (o.signals_unwaited || 0) + (o.broadcasts_unwaited || 0), fmt: fmtCount },
      { label: 'timeouts', get: o => o.timeouts, fmt: fmtCount },
    ];
    const pw = report.park_wake;
    if (pw) add(s, [note(`Park and wake: ${fmtCount(pw.parks)} park${pw.parks === 1 ? '' : 's'} (${fmtNs(pw.park_ns)} parked), ${fmtCount(pw.wakeups)} wake-up${pw.wakeups === 1 ? '' : 's'}, ` +
      `wake latency (signal to the waiter running) avg ${fmtNs(pw.avg_wake_latency_ns)}, max ${fmtNs(pw.max_wake_latency_ns)}; ` +
      `${fmtCount(pw.wakes_unwaited)} of ${fmtCount(pw.wakes_sent)} wakes found no waiter.`)]);
    return add(s, [table(cols, rows, {
      sort: 3, placeholder: 'filter by name or kind', search: o => [o.name, o.kind, siteText(o.site)].join(' '),
      detail: o => [el('h3', null, 'Call stacks that waited'), stackList(o.stacks),
        threadSplit(o, report, [{ label: 'waits', get: t => t.waits, fmt: fmtCount }, { label: 'wait', get: t => t.wait_ns, fmt: fmtNs }])],
      empty: 'No condition variable, futex, semaphore or barrier was waited on.',
    })]);
  }

  function cacheSection(report) {
    const s = section('cachelines', 'Cache-line map');
    const lines = report.cache_lines || (report.cpu_samples && report.cpu_samples.cache_lines);
    if (!Array.isArray(lines)) return add(s, [absent('Not measured in this profile: the analysis has no cache-line data (which sync objects and hot data share a 64-byte line).')]);
    if (!lines.length) return add(s, [note('No cache line holds more than one object or hot datum.')]);
    const keys = [...new Set(lines.flatMap(l => Object.keys(l)))].filter(k => typeof lines[0][k] !== 'object');
    return add(s, [table(
      keys.map(k => ({ label: k.replace(/_/g, ' '), text: typeof lines[0][k] === 'string', mono: typeof lines[0][k] === 'string', get: l => l[k], fmt: (v) => typeof v === 'number' ? (k.endsWith('_ns') ? fmtNs(v) : fmtCount(v)) : v })).concat(
        [{ label: 'on the line', text: true, mono: true, get: l => (l.objects || l.members || l.words || []).map(m => typeof m === 'string' ? m : (m.name || JSON.stringify(m)) + (m.tid !== undefined ? ` (tid ${m.tid}, ${fmtCount(m.writes || 0)} writes)` : '')).join(', ') }]),
      lines, { search: l => JSON.stringify(l) })]);
  }

  function lockOrderSection(report) {
    const s = section('lockorder', 'Lock-order graph');
    const lo = report.lock_order;
    if (!lo || !Array.isArray(lo.edges)) return add(s, [absent('Not measured in this profile: the analysis has no lock-order edges ("held A while acquiring B").')]);
    if (!lo.edges.length) return add(s, [note('No thread held one lock while acquiring another.')]);
    const from = e => e.from ?? e.held, to = e => e.to ?? e.acquired;
    const names = [...new Set(lo.edges.flatMap(e => [from(e), to(e)]))];
    const W = 720, H = 380, cx = W / 2, cy = H / 2, rad = Math.min(W, H) / 2 - 50;
    const pos = new Map(names.map((n, i) => [n, [cx + rad * Math.cos(2 * Math.PI * i / names.length - Math.PI / 2), cy + rad * Math.sin(2 * Math.PI * i / names.length - Math.PI / 2)]]));
    const inCycle = new Set((lo.cycles || []).flat().map(c => typeof c === 'string' ? c : c.name));
    const g = sv('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'lock-order graph' },
      sv('defs', null, sv('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 18, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, sv('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#5b6475' }))));
    for (const e of lo.edges) {
      const [x1, y1] = pos.get(from(e)), [x2, y2] = pos.get(to(e));
      add(g, [sv('line', { x1, y1, x2, y2, stroke: inCycle.has(from(e)) && inCycle.has(to(e)) ? '#c0392b' : '#5b6475', 'stroke-width': 1.5, 'marker-end': 'url(#arrow)' },
        sv('title', null, `held ${from(e)} while acquiring ${to(e)}` + (e.count ? ` (${fmtCount(e.count)} times)` : '')))]);
    }
    for (const n of names) {   // each label outside the circle, away from the arrows
      const [x, y] = pos.get(n), dx = (x - cx) / rad, dy = (y - cy) / rad;
      add(g, [sv('circle', { cx: x, cy: y, r: 7, fill: inCycle.has(n) ? '#c0392b' : '#2f6fdf' }),
        sv('text', { class: 'label', x: x + dx * 14, y: y + dy * 14 + 4, 'text-anchor': dx > 0.3 ? 'start' : dx < -0.3 ? 'end' : 'middle' }, n)]);
    }
    return add(s, [(lo.cycles || []).length ? el('p', { class: 'lead' }, plural(lo.cycles.length, 'lock-order cycle') + ' (potential deadlock), in red.') : note('No cycle: the locks are always taken in one order.'), g]);
  }

  // Thread lanes. With trace events (report.trace) they are when each thread
  // waited; without, each lane is the thread's lifetime and its colours are
  // the shares of that lifetime, which the page says.
  function timelineSection(report) {
    const s = section('timeline', 'Threads over time');
    const threads = report.threads || [];
    if (!threads.length) return add(s, [absent('The profile recorded no thread.')]);
    const wall = (report.process && report.process.wall_ns) || Math.max(...threads.map(t => t.start_ns + t.lifetime_ns), 1);
    const trace = report.trace;
    const MAX = 64, shown = threads.slice(0, MAX);
    const W = 1000, L = 170, R = 10, rowH = 18, T = 20;
    const H = T + shown.length * rowH + 6;
    const x = ns => L + (ns / wall) * (W - L - R);
    const g = sv('svg', { class: 'timeline', viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': 'per-thread timeline' });
    for (let i = 0; i <= 4; i++)
      add(g, [sv('line', { class: 'grid', x1: x(wall * i / 4), x2: x(wall * i / 4), y1: T - 4, y2: H }),
        sv('text', { x: x(wall * i / 4), y: 12, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, fmtNs(wall * i / 4))]);
    const color = new Map(COMPONENTS.map(c => [c[0], c[2]]));
    const parts = t => [
      ['on CPU', t.cpu_ns, color.get('useful')],
      ['waiting for locks', t.lock_wait_ns, color.get('lock_wait')],
      ['parked on condvars and futexes', (t.cond_wait_ns || 0) + ((t.wait_ns_by_kind || {}).futex || 0) + ((t.wait_ns_by_kind || {}).semaphore || 0), color.get('park')],
      ['joining and at barriers', (t.join_wait_ns || 0) + ((t.wait_ns_by_kind || {}).barrier || 0), color.get('barrier')],
      ['runnable, no CPU', t.run_delay_ns || 0, color.get('runnable')],
    ];
    shown.forEach((t, i) => {
      const yy = T + i * rowH, label = t.name ? t.name : 'tid ' + t.tid;
      const lane = sv('g', { class: 'lane' }, sv('text', { class: 'tname', x: L - 6, y: yy + 12, 'text-anchor': 'end' }, label.length > 26 ? label.slice(0, 25) + '…' : label,
        sv('title', null, `${label} (tid ${t.tid})${t.start_routine ? ', ' + t.start_routine : ''}`)));
      const x0 = x(t.start_ns), x1 = x(t.start_ns + t.lifetime_ns);
      add(lane, [sv('rect', { x: x0, y: yy + 2, width: Math.max(x1 - x0, 1), height: rowH - 5, fill: '#f0f1f4', stroke: '#c9ced8' },
        sv('title', null, `${label}: lived ${fmtNs(t.lifetime_ns)} from ${fmtNs(t.start_ns)}`))]);
      const events = trace && (trace.threads || []).find(e => e.thread === t.index);
      if (events) {
        for (const ev of events.events || []) {
          if (!ev.dur_ns) continue;   // wakes are drawn as arrows below
          // True widths, however thin: thousands of 20 ns holds must not look like one long hold.
          add(lane, [sv('rect', { x: x(ev.ts_ns), y: yy + 2, width: x(ev.ts_ns + ev.dur_ns) - x(ev.ts_ns), height: rowH - 5,
            fill: ev.type === 'hold' ? HOLD : color.get(WAIT_COMPONENT[ev.kind] || 'park') },
          sv('title', null, `${ev.type === 'hold' ? 'held' : 'waited for'} ${ev.kind || ''} ${ev.object || '(unknown object)'}: ${fmtNs(ev.dur_ns)} from ${fmtNs(ev.ts_ns)}`))]);
        }
      } else {
        // Shares of the life; when the parts add up to more than the life
        // (CPU time counted before the shim started), shares of their sum.
        const span = Math.max(t.lifetime_ns || 1, parts(t).reduce((a, p) => a + (p[1] || 0), 0));
        let xa = x0;
        for (const [name, ns, c] of parts(t)) {
          const w = (ns / span) * (x1 - x0);
          if (w <= 0) continue;
          add(lane, [sv('rect', { x: xa, y: yy + 2, width: Math.max(w, 0.5), height: rowH - 5, fill: c, opacity: 0.9 },
            sv('title', null, `${label}: ${name} ${fmtNs(ns)} (${fmtPct(ns / (t.lifetime_ns || 1))} of its life)`))]);
          xa += w;
          if (xa >= x1) break;
        }
      }
      add(g, [lane]);
    });
    // Waker -> wakee arrows, between lanes that are drawn.
    const laneOf = new Map(shown.map((t, i) => [t.index, i]));
    for (const f of (trace && trace.flows) || []) {
      if (!laneOf.has(f.from_thread) || !laneOf.has(f.to_thread)) continue;
      const y1 = T + laneOf.get(f.from_thread) * rowH + rowH / 2 - 1, y2 = T + laneOf.get(f.to_thread) * rowH + rowH / 2 - 1;
      add(g, [sv('line', { x1: x(f.wake_ns), y1, x2: x(f.woken_ns), y2, stroke: '#1d2330', 'stroke-width': 0.8, opacity: 0.6 },
        sv('title', null, `wake on ${f.object || '?'}: ${fmtNs(f.woken_ns - f.wake_ns)} from the wake to the waiter running`))]);
    }
    const dropped = trace && trace.dropped ? ` ${fmtCount(trace.dropped)} older events were dropped: each thread's ring keeps its newest ${fmtCount(trace.capacity)}.` : '';
    add(s, [trace ? note('From the trace recorded with the profile: each slice is one wait or one sampled hold, each line a wake from the waker to the thread it woke.' + dropped)
      : absent('No trace in this profile (record one with `convoy run --trace`): each bar is a thread\'s lifetime, and its colours are how much of that life it spent on each thing in total — not when.'),
    el('div', { class: 'scroll' }, g),
    legend(trace ? [{ label: 'waiting for a lock', color: color.get('lock_wait') }, { label: 'parked (condvar, semaphore, futex)', color: color.get('park') },
      { label: 'at a barrier', color: color.get('barrier') }, { label: 'holding a lock (sampled)', color: HOLD }, { label: 'alive', color: '#f0f1f4' }]
      : [{ label: 'on CPU', color: color.get('useful') }, { label: 'waiting for locks', color: color.get('lock_wait') },
        { label: 'parked', color: color.get('park') }, { label: 'join / barrier', color: color.get('barrier') },
        { label: 'runnable, no CPU', color: color.get('runnable') }, { label: 'alive, other', color: '#f0f1f4' }]),
    threads.length > MAX ? note(`The first ${MAX} of ${threads.length} threads are drawn; the table below has them all.`) : null]);
    return s;
  }

  function threadSection(report) {
    const s = section('threads', 'Threads');
    const cols = [
      { label: 'thread', text: true, mono: true, get: t => t.name || '' },
      { label: 'tid', get: t => t.tid },
      { label: 'start routine', text: true, mono: true, get: t => t.start_routine || (t.main ? '(main)' : '') },
      { label: 'lifetime', get: t => t.lifetime_ns, fmt: fmtNs },
      { label: 'CPU', get: t => t.cpu_ns, fmt: fmtNs },
      { label: 'lock wait', get: t => t.lock_wait_ns, fmt: fmtNs },
      { label: 'condvar wait', get: t => t.cond_wait_ns, fmt: fmtNs },
      { label: 'run-queue delay', get: t => t.run_delay_ns, fmt: fmtNs },
      { label: 'vol. switches', get: t => t.voluntary_switches, fmt: fmtCount },
      { label: 'invol. switches', get: t => t.involuntary_switches, fmt: fmtCount },
    ];
    return add(s, [table(cols, report.threads || [], { sort: 4, placeholder: 'filter by name or routine', search: t => [t.name, t.tid, t.start_routine].join(' ') })]);
  }

  // The sections drawn from one run's report, re-drawn when the count changes.
  function detailSections(report) {
    return [lockSection(report), syncSection(report), cacheSection(report), lockOrderSection(report), timelineSection(report), threadSection(report)];
  }
  function details(view) {
    const holder = el('div', { class: 'details' });
    const reports = view.reports;
    if (!reports.length) return [absent('The sweep has no run to show in detail.')];
    const draw = i => holder.replaceChildren(...detailSections(reports[i].report));
    const out = [];
    if (reports.length > 1) {
      const sel = el('select', { id: 'run-select', 'aria-label': 'thread count', onchange: e => draw(Number(e.target.value)) },
        reports.map((r, i) => el('option', { value: i }, plural(r.threads, 'thread'))));
      sel.value = String(reports.length - 1);
      out.push(el('div', { class: 'controls', style: 'margin-top:28px' }, el('strong', null, 'Details of the run at '), sel,
        el('span', { class: 'note' }, '(each count\'s median run)')));
    }
    draw(reports.length - 1);
    out.push(holder);
    return out;
  }

  function viewOf(page) {
    if (page.kind === 'sweep')
      return { sweep: page.sweep, reports: page.reports || [], findings: page.sweep.findings || [] };
    const r = page.report;
    return { sweep: null, reports: [{ threads: (r.stack || {}).threads, report: r }], findings: r.findings || [] };
  }
  function commandOf(view) {
    if (view.sweep) return (view.sweep.command || []).join(' ');
    return (view.reports[0].report.process || {}).cmdline || '';
  }

  function renderOne(page, into) {
    const view = viewOf(page);
    add(into, [verdict(view), el('div', { class: 'charts' }, curveSection(view), stackSection(view)), findingsSection(view.findings), details(view)]);
    return view;
  }

  function renderDiff(page, into) {
    const d = page.diff, va = viewOf(page.a), vb = viewOf(page.b);
    const s = section('verdict', 'Comparison');
    const box = el('div', { class: 'verdict' },
      el('p', null, el('strong', null, 'A: '), el('span', { class: 'mono' }, d.a || commandOf(va))),
      el('p', null, el('strong', null, 'B: '), el('span', { class: 'mono' }, d.b || commandOf(vb))));
    if (Array.isArray(d.runs) && d.runs.length) {
      add(box, d.runs.map(r => el('p', { class: 'step' }, `${plural(r.threads, 'thread')}: B takes ${(r.wall_ns_a ? r.wall_ns_b / r.wall_ns_a : 0).toFixed(2)}× A's wall time (${fmtNs(r.wall_ns_a)} → ${fmtNs(r.wall_ns_b)}); speedup ${fmtSpeedup(r.speedup_a)} → ${fmtSpeedup(r.speedup_b)}.`)));
    } else {
      const wa = (va.reports[0].report.stack || {}).wall_ns, wb = (vb.reports[0].report.stack || {}).wall_ns;
      add(box, [el('p', { class: 'step' }, `B takes ${(wa ? wb / wa : 0).toFixed(2)}× A's wall time (${fmtNs(wa)} → ${fmtNs(wb)}).`)]);
    }
    add(into, [add(s, [box])]);
    const charts = el('div', { class: 'charts' });
    if (va.sweep && vb.sweep)
      add(charts, [add(section('speedup', 'Speedup against ideal'), [legend([{ label: 'A', color: '#2f6fdf' }, { label: 'B', color: '#c0392b' }]),
        speedupChart([{ label: 'A', runs: va.sweep.runs }, { label: 'B', runs: vb.sweep.runs }], va.sweep.cpus)])]);
    const runsOf = v => { const st = v.reports[0].report.stack || {}; return v.sweep ? v.sweep.runs : [{ threads: st.threads, stack: st, budget_ns: st.budget_ns }]; };
    const bars = [];
    for (const ra of runsOf(va)) {
      const rb = runsOf(vb).find(r => r.threads === ra.threads) || (vb.sweep ? null : runsOf(vb)[0]);
      bars.push({ label: 'A, ' + plural(ra.threads, 'thread'), budget: ra.budget_ns, parts: stackParts(ra.stack) });
      if (rb) bars.push({ label: 'B, ' + plural(rb.threads, 'thread'), budget: rb.budget_ns, parts: stackParts(rb.stack) });
    }
    add(charts, [add(section('stack', 'Where the worker time went'), [stackChart(bars), legend(stackParts(runsOf(va)[0].stack))])]);
    add(into, [charts]);
    add(into, [add(section('differences', 'Differences, biggest first'), [table([
      { label: 'what', text: true, get: r => r.name },
      { label: 'A', get: r => r.a_ns, fmt: fmtNs },
      { label: 'B', get: r => r.b_ns, fmt: fmtNs },
      { label: 'B − A', get: r => r.b_ns - r.a_ns, fmt: v => (v > 0 ? '+' : v < 0 ? '−' : '') + fmtNs(Math.abs(v)) },
    ], (d.differences || []).filter(r => r.a_ns || r.b_ns), { placeholder: 'filter', search: r => r.name }),
    note('Rows that are zero on both sides are left out.')])]);
    add(into, [el('div', { class: 'sides' }, findingsSection(d.findings_a || va.findings, 'findings'), findingsSection(d.findings_b || vb.findings, 'findings-b'))]);
    into.querySelector('#findings h2').textContent = 'Findings in A';
    into.querySelector('#findings-b h2').textContent = 'Findings in B';
    for (const [name, p] of [['A', page.a], ['B', page.b]]) {
      const body = el('div');
      add(into, [el('details', { class: 'side' }, el('summary', null, 'The whole report of ' + name), body)]);
      add(body, details(viewOf(p)));
      for (const e of body.querySelectorAll('[id]'))   // ids stay unique on the page
        e.id = name.toLowerCase() + '-' + e.id;
    }
    return va;
  }

  function main() {
    const app = document.getElementById('app');
    let page;
    try {
      page = JSON.parse(document.getElementById('convoy-data').textContent);
    } catch (e) {
      app.replaceChildren(absent('This page\'s data is damaged and cannot be read: ' + e.message));
      return;
    }
    app.replaceChildren();
    const view = page.kind === 'diff' ? renderDiff(page, app) : renderOne(page, app);
    const cmd = page.kind === 'diff' ? 'diff' : commandOf(view);
    document.getElementById('subtitle').textContent = page.kind === 'diff' ? 'comparison of two ' + (view.sweep ? 'sweeps' : 'profiles') : cmd;
    document.title = 'convoy: ' + cmd;
    document.body.dataset.rendered = page.kind;   // the browser tests wait for this
  }
  main();
})();
