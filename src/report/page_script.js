// Draws report.html from the JSON in #report-data with ECharts (inlined before this script).
// Every chart's element carries data-chart (its key) and data-lines (the lines drawn), which the
// browser test reads back.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const errorBox = document.getElementById('errors');
  function showError(message) {
    errorBox.hidden = false;
    errorBox.textContent += message + '\n';
  }

  const palette = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4',
                   '#ea7ccc', '#2f4554', '#61a0a8', '#d48265', '#749f83', '#ca8622', '#bda29a', '#6e7074'];
  const colorOf = {};
  data.groups.forEach((g, i) => { colorOf[g.name] = palette[i % palette.length]; });
  const charts = [];
  window.addEventListener('resize', () => charts.forEach((c) => c.resize()));

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(v, digits) {
    return v === null || v === undefined ? '—' : String(Number(Number(v).toPrecision(digits || 4)));
  }
  function zip(x, y) { return x.map((s, i) => [s, y[i]]); }
  function logScale(values) {
    const positive = values.filter((v) => v !== null && v > 0);
    if (positive.length !== values.filter((v) => v !== null).length || positive.length === 0) return false;
    return Math.max(...positive) / Math.min(...positive) > 1e3;
  }
  function chart(parent, key, height) {
    const box = el('div', {class: 'chart', 'data-chart': key, style: 'height:' + (height || 300) + 'px'});
    parent.appendChild(box);
    const c = echarts.init(box);
    charts.push(c);
    return {box: box, c: c};
  }
  function disposeCharts(root) {
    root.querySelectorAll('.chart').forEach((box) => {
      const c = echarts.getInstanceByDom(box);
      charts.splice(charts.indexOf(c), 1);
      c.dispose();
    });
    root.textContent = '';
  }
  function draw(target, option, lines) {
    target.c.setOption(option, true);
    target.box.dataset.lines = String(lines);
  }
  function axes(title, values, marks) {
    return {
      title: {text: title, textStyle: {fontSize: 13}},
      tooltip: {trigger: 'axis', confine: true},
      grid: {left: 60, right: 20, top: 40, bottom: 70},
      xAxis: {type: 'value', name: 'step', nameLocation: 'end', min: 'dataMin', max: 'dataMax'},
      yAxis: {type: logScale(values) ? 'log' : 'value', scale: true},
      dataZoom: [{type: 'inside'}],
      legend: {type: 'scroll', bottom: 0},
      animation: false,
      series: [],
    };
  }
  function markAt(step) {
    return step === null ? undefined : {symbol: 'none', silent: true, lineStyle: {color: '#c00'},
                                        data: [{xAxis: step}], label: {formatter: 'step ' + step}};
  }

  // A precision schedule's switches: a dashed line after each phase's last step.
  function phaseMarks(steps, color) {
    return {symbol: 'none', silent: true, lineStyle: {color: color, type: 'dashed'},
            data: steps.map((s) => ({xAxis: s})), label: {formatter: (p) => 'phase switch ' + p.value}};
  }

  // Training curves: mean over seeds and the min-max band, one color per group.
  // The band around each group's mean curve: the seeds' min–max, or the mean's 95% interval
  // (none where fewer than two seeds logged the step).
  const bands = {minmax: {lo: 'lo', hi: 'hi', title: 'min–max'}, ci: {lo: 'ci_lo', hi: 'ci_hi', title: '95% CI of the mean'}};
  function drawCurves(root) {
    disposeCharts(root);
    const band = bands[document.getElementById('band').value] || bands.minmax;
    root.dataset.band = band.title;
    Object.keys(data.curves).sort().forEach((key) => {
      const target = chart(root, key);
      const option = axes(key + (data.single_run ? '' : ' (mean and ' + band.title + ' over seeds)'), []);
      let values = [];
      Object.entries(data.curves[key]).forEach(([group, b]) => {
        const lo = b[band.lo], hi = b[band.hi];
        values = values.concat(b.mean, lo, hi);
        const color = colorOf[group];
        option.series.push({name: group, type: 'line', data: zip(b.x, lo), stack: 'band-' + group, symbol: 'none',
                            color: color, lineStyle: {opacity: 0}, tooltip: {show: false}, legendHoverLink: false});
        option.series.push({name: group, type: 'line', stack: 'band-' + group, symbol: 'none', color: color, lineStyle: {opacity: 0},
                            areaStyle: {color: color, opacity: 0.2}, tooltip: {show: false},
                            data: zip(b.x, hi.map((h, i) => (h === null || lo[i] === null ? null : h - lo[i])))});
        const switches = (data.phases || {})[group] || [];
        option.series.push({name: group, type: 'line', data: zip(b.x, b.mean), symbol: 'none', color: color,
                            markLine: switches.length ? phaseMarks(switches, color) : undefined});
      });
      option.yAxis.type = logScale(values) ? 'log' : 'value';
      draw(target, option, Object.keys(data.curves[key]).length);
    });
  }

  // Diagnostics of one group: one chart per chart key, one line per point or tensor.
  const diagState = {group: null, step: null, focus: null};
  function drawDiagnostics() {
    const root = document.getElementById('diagnostics');
    disposeCharts(root);
    root.dataset.group = diagState.group;
    let section = null;
    Object.keys(data.charts).sort().forEach((key) => {
      const grid = data.charts[key][diagState.group];
      if (!grid) return;
      const head = key.split('/')[0];
      if (section !== head) {
        section = head;
        root.appendChild(el('h3', {}, head));
      }
      const target = chart(root, key, 280);
      const option = axes(key, []);
      let values = [];
      Object.entries(grid.lines).forEach(([label, y]) => {
        values = values.concat(y);
        option.series.push({name: label || key, type: 'line', data: zip(grid.x, y), symbol: 'none',
                            connectNulls: true, markLine: markAt(diagState.step)});
      });
      option.yAxis.type = logScale(values) ? 'log' : 'value';
      draw(target, option, option.series.length);
    });
    if (diagState.focus) {
      const box = root.querySelector('[data-chart="' + CSS.escape(diagState.focus) + '"]');
      if (box) box.scrollIntoView();
    }
    drawHeatmap();
  }

  // Log2 histograms of one weight or one point's values over steps, as a heatmap (color: log10(1 + count)).
  function drawHeatmap() {
    const root = document.getElementById('heatmap');
    const select = document.getElementById('tensor');
    const hists = data.hists[diagState.group] || {};
    const names = Object.keys(hists).sort();
    const previous = select.value;
    select.textContent = '';
    names.forEach((n) => select.appendChild(el('option', {value: n}, n)));
    if (names.includes(previous)) select.value = previous;
    disposeCharts(root);
    if (names.length === 0) { root.appendChild(el('p', {}, 'No log2 histograms logged for this group.')); return; }
    const h = hists[select.value];
    const bins = h.counts[0].length;
    const cells = [];
    let top = 0;
    h.counts.forEach((row, x) => row.forEach((count, y) => {
      const v = Math.log10(1 + count);
      top = Math.max(top, v);
      if (count > 0) cells.push([x, y, v]);
    }));
    const target = chart(root, 'weight_log2', 360);
    draw(target, {
      title: {text: 'log2 |x| histogram of ' + select.value + ' (run ' + h.run + ')', textStyle: {fontSize: 13}},
      tooltip: {formatter: (p) => 'step ' + h.steps[p.value[0]] + ', 2^' + (h.lo + p.value[1]) + ': ' +
                                  Math.round(Math.pow(10, p.value[2]) - 1)},
      grid: {left: 60, right: 80, top: 40, bottom: 40},
      xAxis: {type: 'category', name: 'step', data: h.steps},
      yAxis: {type: 'category', name: 'log2', data: Array.from({length: bins}, (_, i) => h.lo + i)},
      visualMap: {min: 0, max: top || 1, calculable: true, orient: 'vertical', right: 0, top: 'center',
                  text: ['log10(1+n)', ''], inRange: {color: ['#fff7bc', '#fd8d3c', '#bd0026', '#49006a']}},
      animation: false,
      series: [{type: 'heatmap', data: cells}],
    }, 1);
  }

  // Final metrics across runs, one line per run colored by group.
  function drawParallel(root) {
    const f = data.finals;
    if (f.dims.length === 0) return;
    const target = chart(root, 'finals', 380);
    const byGroup = {};
    f.rows.forEach((r) => { (byGroup[r.group] = byGroup[r.group] || []).push(r.values.map((v) => (v === null ? '-' : v))); });
    draw(target, {
      title: {text: 'final metrics per run', textStyle: {fontSize: 13}},
      legend: {type: 'scroll', bottom: 0},
      parallel: {left: 40, right: 120, top: 80, bottom: 60},
      parallelAxis: f.dims.map((d, i) => ({dim: i, name: d, nameRotate: 20, scale: true})),
      animation: false,
      series: Object.entries(byGroup).map(([g, rows]) => ({name: g, type: 'parallel', data: rows, color: colorOf[g],
                                                          lineStyle: {width: 2, opacity: 0.8}})),
    }, Object.keys(byGroup).length);
  }

  function table(root, headers, rows, id) {
    const t = el('table', id ? {id: id} : {});
    const tr = el('tr');
    headers.forEach((h) => tr.appendChild(el('th', {}, h)));
    t.appendChild(tr);
    rows.forEach((cells) => {
      const row = el('tr');
      cells.forEach((c) => { if (c instanceof Node) { const td = el('td'); td.appendChild(c); row.appendChild(td); } else row.appendChild(el('td', {}, c)); });
      t.appendChild(row);
    });
    root.appendChild(t);
  }

  // A chart whose key names the warning kind ("underflow" -> quant/*/underflow_pct), else the loss.
  function chartFor(kind) {
    const keys = Object.keys(data.charts).sort();
    return keys.find((k) => kind && k.includes(kind)) || null;
  }
  function showEvent(e) {
    diagState.group = e.group;
    diagState.step = e.step;
    diagState.focus = e.kind === 'stop' && data.charts['quant/*/non_finite'] ? 'quant/*/non_finite' : chartFor(e.kind);
    document.getElementById('group').value = e.group;
    drawDiagnostics();
    if (!diagState.focus) document.getElementById('diagnostics').scrollIntoView();
  }

  function drawTables() {
    table(document.getElementById('groups'),
          ['group', 'preset', 'runs', 'diverged', 'seeds', 'final val loss', 'sd', '95% CI', 'min', 'max',
           'gap to bf16 %', 'paired vs bf16', 'gap to fp32 %', 'paired vs fp32', 'reached target', 'tokens to target',
           's to target', 'peak RSS MiB', 'checkpoint MiB'],
          data.groups.map((g) => [g.name, g.preset, g.runs, g.diverged, g.seeds, fmt(g.val_loss), fmt(g.val_sd),
                                  g.val_ci ? '[' + fmt(g.val_ci[0]) + ', ' + fmt(g.val_ci[1]) + ']' : '—',
                                  fmt(g.val_min), fmt(g.val_max), fmt(g.gap_bf16, 3), g.paired_bf16 || '—',
                                  fmt(g.gap_fp32, 3), g.paired_fp32 || '—', g.reached || '—', fmt(g.tokens_to_target),
                                  fmt(g.seconds_to_target), fmt(g.peak_rss_mib), fmt(g.checkpoint_mib)]), 'group-table');
    const fits = document.getElementById('range-fit');
    if (data.range_fit.length === 0) fits.appendChild(el('p', {}, 'No value profiles in these runs.'));
    data.range_fit.forEach((f) => {
      fits.appendChild(el('h3', {}, f.group + ': ' + f.format + ' (run ' + f.run + ')'));
      table(fits, ['point', 'overflow %', 'flush %', 'subnormal %'],
            f.rows.map((r) => [r[0], fmt(r[1], 3), fmt(r[2], 3), fmt(r[3], 3)]));
    });
    const verdicts = document.getElementById('verdicts');
    if (data.verdicts.length === 0) verdicts.appendChild(el('p', {}, 'No [criteria] in this sweep.'));
    else table(verdicts, ['criterion', 'group', 'verdict', 'why'],
               data.verdicts.map((v) => [v.criterion, v.group, v.verdict, v.why]), 'verdict-table');
    table(document.getElementById('runs'),
          ['run', 'group', 'seed', 'status', 'last step', 'final val loss', 'early warning', 'warnings'],
          data.runs.map((r) => [r.name, r.group, r.seed, r.status, r.last_step, fmt(r.val_loss),
                                r.first_warning ? 'step ' + r.first_warning.step + ': ' + r.first_warning.kind +
                                                  (r.first_warning.where ? ' at ' + r.first_warning.where : '') : '—',
                                r.warnings]), 'run-table');
    const searches = document.getElementById('searches');
    if (data.searches.length === 0) searches.appendChild(el('p', {}, 'No threshold searches in this directory.'));
    else table(searches, ['group', 'key', 'largest stable', 'smallest diverged', 'probes'],
               data.searches.map((s) => [s.group, s.key, s.bracket ? fmt(s.bracket[0]) : '—',
                                         s.bracket ? fmt(s.bracket[1]) : '—',
                                         s.probes.map((p) => fmt(p.value) + (p.diverged ? ' diverged' : ' stable') +
                                                            (p.run ? ' (' + p.run + ')' : '')).join('; ')]),
               'search-table');
    const events = document.getElementById('events');
    if (data.events.length === 0) events.appendChild(el('p', {}, 'No warnings and no stops.'));
    else table(events, ['run', 'step', 'kind', 'where', 'value', 'threshold', 'message'],
               data.events.map((e) => {
                 const link = el('a', {href: '#diagnostics-head'}, e.run);
                 link.addEventListener('click', () => showEvent(e));
                 return [link, e.step, e.kind, e.where || '—', fmt(e.value), fmt(e.threshold), e.message];
               }), 'event-table');
  }

  try {
    document.getElementById('title').textContent = 'AltGrad report: ' + data.title;
    drawTables();
    drawCurves(document.getElementById('curves'));
    document.getElementById('band').addEventListener('change', () => drawCurves(document.getElementById('curves')));
    drawParallel(document.getElementById('finals'));
    const withCharts = data.groups.map((g) => g.name).filter((g) => Object.values(data.charts).some((c) => c[g]));
    const select = document.getElementById('group');
    withCharts.forEach((g) => select.appendChild(el('option', {value: g}, g)));
    // The group with the most diagnostics first (a quantized one, not the fp32 baseline).
    const count = (g) => Object.values(data.charts).filter((c) => c[g]).length;
    diagState.group = withCharts.slice().sort((a, b) => count(b) - count(a))[0] || null;
    if (diagState.group) select.value = diagState.group;
    select.addEventListener('change', () => { diagState.group = select.value; diagState.step = null; drawDiagnostics(); });
    document.getElementById('tensor').addEventListener('change', drawHeatmap);
    drawDiagnostics();
    document.body.dataset.rendered = 'yes';
    document.body.dataset.renderMs = String(Math.round(performance.now()));
  } catch (e) {
    showError('report failed to render: ' + e.message);
  }
})();
