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

  // The forest plot: each compared group's paired gap to its baseline with its 95% interval as an
  // error bar, 0 and the criteria's thresholds as vertical lines, the marker coloured by the verdict
  // on the loosest criterion, and behind the bar, as a pale band, the wider interval at Holm's level
  // that this verdict was decided on. One scatter series per verdict, so that the legend names the
  // colours.
  const verdictColors = {pass: '#3ba272', inconclusive: '#e6a23c', fail: '#d94e4e'};
  function escapeHtml(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
  }
  // The x axis holds every interval, 0 and every threshold (ECharts' own extent would leave out the
  // lines), widened to a round step so that its end labels read as the others do.
  function forestExtent(f) {
    const ends = [0].concat(f.thresholds);
    f.rows.forEach((r) => [r.gap, r.low, r.high, r.corrected_low, r.corrected_high]
      .forEach((v) => { if (v !== null) ends.push(v); }));
    const lo = Math.min(...ends), hi = Math.max(...ends);
    const rough = (hi - lo) / 8 || 1, power = Math.pow(10, Math.floor(Math.log10(rough)));
    const step = power * ([1, 2, 5].find((m) => m * power >= rough) || 10);
    return {min: Math.floor(lo / step - 0.5) * step, max: Math.ceil(hi / step + 0.5) * step};
  }
  function forestTooltip(f, labels, i) {
    const r = f.rows[i];
    const interval = r.low === null ? '' : ' [' + fmt(r.low) + ', ' + fmt(r.high) + ']';
    const gap = r.gap === null ? 'no paired seeds'
      : 'paired gap ' + fmt(r.gap) + '%' + interval + ' over ' + r.seeds + (r.seeds === 1 ? ' seed' : ' seeds');
    const corrected = r.corrected_low === null ? ''
      : '<br>' + escapeHtml('decided at Holm\'s level ' + fmt(r.corrected_level, 3) + ': [' + fmt(r.corrected_low) + ', ' +
                            fmt(r.corrected_high) + ']');
    return escapeHtml(labels[i] + ': ' + gap) + corrected +
      r.verdicts.map((v) => '<br>' + escapeHtml(v.criterion + ': ' + v.verdict)).join('');
  }
  function errorBar(params, api) {
    const low = api.coord([api.value(0), api.value(2)]), high = api.coord([api.value(1), api.value(2)]);
    const cap = api.size([0, 1])[1] * 0.2;
    const style = {stroke: api.visual('color'), lineWidth: 2};
    const segment = (x1, y1, x2, y2) => ({type: 'line', shape: {x1: x1, y1: y1, x2: x2, y2: y2}, style: style});
    return {type: 'group', children: [segment(low[0], low[1], high[0], high[1]),
                                      segment(low[0], low[1] - cap, low[0], low[1] + cap),
                                      segment(high[0], high[1] - cap, high[0], high[1] + cap)]};
  }
  function band(params, api) {
    const low = api.coord([api.value(0), api.value(2)]), high = api.coord([api.value(1), api.value(2)]);
    const height = api.size([0, 1])[1] * 0.3;
    return {type: 'rect', shape: {x: low[0], y: low[1] - height / 2, width: high[0] - low[0], height: height},
            style: {fill: api.visual('color'), opacity: 0.25}};
  }
  // A scatter series per verdict for the markers, the corrected intervals' bands, then the error
  // bars, which carry the lines.
  function forestSeries(f, several) {
    const lines = [{xAxis: 0, lineStyle: {type: 'solid'}, label: {formatter: several ? 'baseline' : f.rows[0].baseline}}]
      .concat(f.thresholds.map((t) => ({xAxis: t, label: {formatter: t + '%'}})));
    const series = Object.entries(verdictColors).map(([verdict, color]) => ({
      name: verdict, type: 'scatter', color: color, symbolSize: 12, z: 3,
      data: f.rows.map((r, i) => ({value: [r.gap, i], row: i, verdict: r.verdict}))
        .filter((d) => d.verdict === verdict && d.value[0] !== null),
    }));
    const bands = f.rows.map((r, i) => ({value: [r.corrected_low, r.corrected_high, i], row: i,
                                         itemStyle: {color: verdictColors[r.verdict]}}))
      .filter((d) => d.value[0] !== null);
    series.push({name: 'corrected interval', type: 'custom', renderItem: band, encode: {x: [0, 1], y: 2}, data: bands,
                 z: 1});
    const bars = f.rows.map((r, i) => ({value: [r.low, r.high, i], row: i, itemStyle: {color: verdictColors[r.verdict]}}))
      .filter((d) => d.value[0] !== null);
    series.push({name: '95% interval', type: 'custom', renderItem: errorBar, encode: {x: [0, 1], y: 2}, data: bars, z: 2,
                 markLine: {symbol: 'none', silent: true, lineStyle: {color: '#555', type: 'dashed'},
                            label: {position: 'start'}, data: lines}});
    return series;
  }
  function drawForest(root) {
    const f = data.forest;
    if (f.rows.length === 0) {
      root.appendChild(el('p', {}, 'No [criteria] in this sweep: no group is compared with a baseline.'));
      return;
    }
    const several = new Set(f.rows.map((r) => r.baseline)).size > 1;
    const labels = f.rows.map((r) => (several ? r.group + ' vs ' + r.baseline : r.group));
    const extent = forestExtent(f);
    const target = chart(root, 'forest', 110 + 36 * f.rows.length);
    draw(target, {
      tooltip: {trigger: 'item', confine: true, formatter: (p) => forestTooltip(f, labels, p.data.row)},
      legend: {data: Object.keys(verdictColors), top: 0},
      grid: {left: 20, right: 50, top: 56, bottom: 40, containLabel: true},
      xAxis: {type: 'value', name: 'paired gap to the baseline, %', nameLocation: 'middle', nameGap: 26,
              min: extent.min, max: extent.max, axisLabel: {formatter: (v) => fmt(v, 3)}},
      yAxis: {type: 'category', data: labels, inverse: true,
              axisLabel: {formatter: (label, i) => (f.rows[i].gap === null ? label + ' (no paired seeds)' : label)}},
      animation: false,
      series: forestSeries(f, several),
    }, f.rows.length);
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

  // A group table cell: integers as they are, other numbers to 4 significant digits, null as a dash.
  function cellText(v) {
    if (v === null || v === undefined) return '—';
    if (typeof v !== 'number') return v;
    return Number.isInteger(v) ? String(v) : fmt(v);
  }

  function drawTables() {
    table(document.getElementById('groups'), data.group_table.columns,
          data.group_table.rows.map((row) => row.map(cellText)), 'group-table');
    const fits = document.getElementById('range-fit');
    if (data.range_fit.length === 0) fits.appendChild(el('p', {}, 'No value profiles in these runs.'));
    data.range_fit.forEach((f) => {
      fits.appendChild(el('h3', {}, f.group + ': ' + f.format + ' (run ' + f.run + ')'));
      table(fits, ['point', 'overflow %', 'flush %', 'subnormal %'],
            f.rows.map((r) => [r[0], fmt(r[1], 3), fmt(r[2], 3), fmt(r[3], 3)]));
    });
    const verdicts = document.getElementById('verdicts');
    if (data.verdicts.length === 0) verdicts.appendChild(el('p', {}, 'No [criteria] in this sweep.'));
    else table(verdicts, ['criterion', 'group', 'verdict', 'alone', 'why', 'sign test', 'seeds for 80% power', 'sign of the gap'],
               data.verdicts.map((v) => [v.criterion, v.group, v.verdict, v.alone, v.why, v.sign_test, v.seeds, v.reading]),
               'verdict-table');
    table(document.getElementById('runs'),
          ['run', 'group', 'seed', 'status', 'last step', 'final val loss', 'early warning', 'warnings'],
          data.runs.map((r) => [r.name, r.group, r.seed, r.status, r.last_step, fmt(r.val_loss),
                                r.first_warning ? 'step ' + r.first_warning.step + ': ' + r.first_warning.kind +
                                                  (r.first_warning.where ? ' at ' + r.first_warning.where : '') : '—',
                                r.warnings]), 'run-table');
    const searches = document.getElementById('searches');
    if (data.searches.length === 0) searches.appendChild(el('p', {}, 'No threshold searches in this directory.'));
    else table(searches, ['group', 'seed', 'key', 'largest stable', 'smallest diverged', 'probes'],
               data.searches.map((s) => [s.group, s.seed === null ? '—' : s.seed, s.key, s.bracket ? fmt(s.bracket[0]) : '—',
                                         s.bracket ? fmt(s.bracket[1]) : '—',
                                         s.probes.map((p) => fmt(p.value) + (p.diverged ? ' diverged' : ' stable') +
                                                            (p.run ? ' (' + p.run + ')' : '')).join('; ')]),
               'search-table');
    // Groups searched at several seeds: the geometric mean of the seeds' bracket midpoints (tables.cpp).
    if (data.thresholds.length > 0) {
      const thresholds = document.getElementById('thresholds');
      thresholds.appendChild(el('p', {class: 'note'}, "Over seeds: each seed's threshold is its bracket's midpoint " +
                                'on the log scale; the geometric mean and its 95% interval over seeds; resolution is ' +
                                "the factor by which one seed's midpoint may miss its threshold."));
      table(thresholds, ['group', 'key', 'seeds', 'threshold', '95% interval', 'resolution', 'outside the range',
                         'unfinished'],
            data.thresholds.map((t) => [t.group, t.key, t.seeds, fmt(t.threshold),
                                        t.interval[0] === null ? '—' : '[' + fmt(t.interval[0]) + ', ' + fmt(t.interval[1]) + ']',
                                        t.resolution === null ? '—' : '×' + fmt(t.resolution), t.outside_range,
                                        t.unfinished]),
            'threshold-table');
    }
    const events = document.getElementById('events');
    if (data.events.length === 0) events.appendChild(el('p', {}, 'No warnings and no stops.'));
    else table(events, ['run', 'step', 'kind', 'where', 'value', 'threshold', 'message'],
               data.events.map((e) => {
                 const link = el('a', {href: '#diagnostics-head'}, e.run);
                 link.addEventListener('click', () => showEvent(e));
                 return [link, e.step, e.kind, e.where || '—', fmt(e.value), fmt(e.threshold), e.message];
               }), 'event-table');
    const startUp = document.getElementById('start-up');
    if (data.start_up.length === 0) startUp.appendChild(el('p', {}, 'No start-up events.'));
    else table(startUp, ['run', 'step', 'kind', 'point', 'statistic', 'value', 'message'],
               data.start_up.map((e) => [e.run, e.step, e.kind, e.point || '—', e.statistic || '—', fmt(e.value), e.message]),
               'start-up-table');
  }

  try {
    document.getElementById('title').textContent = 'AltGrad report: ' + data.title;
    drawTables();
    drawForest(document.getElementById('forest'));
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
