// flame_check.js PAGE.html OUT.png SEARCH ZOOM WIDTH - drive an interactive
// flame graph (alc_flamegraph_html) in headless Chromium with puppeteer-core
// (installed by `make test` into build/node) as a person would: read it, check
// that every label fits its box and that shortened labels are the longest
// form that fits, search for SEARCH, zoom into the first frame whose name
// starts with ZOOM, reset, switch to objects, and screenshot it to OUT.png.
// Prints one JSON object of what it saw; tests/t_alloc.sh checks it.
'use strict';
const path = require('path');
const puppeteer = require(path.resolve(process.env.PUPPETEER_DIR || 'build/node', 'node_modules/puppeteer-core'));
const [page_path, png, search, zoomTo, width] = process.argv.slice(2);

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  const seen = {errors: []};
  try {
    const page = await browser.newPage();
    page.on('pageerror', e => seen.errors.push(String(e)));
    await page.setViewport({width: Number(width) || 1200, height: 900});
    await page.goto('file://' + path.resolve(page_path));
    const state = () => page.evaluate(() => {
      const svg = document.getElementById('flame');
      const gs = [...svg.querySelectorAll('g[data-i]')];
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = '12px "DejaVu Sans Mono", monospace';
      const boxes = gs.map(g => {
        const r = g.querySelector('rect'), t = g.querySelector('text');
        return {name: g.dataset.name, w: r.width.baseVal.value, label: t ? t.textContent : '',
                lw: t ? t.getComputedTextLength() : 0, match: g.classList.contains('match'),
                fullFits: ctx.measureText(g.dataset.name).width <= r.width.baseVal.value - 6};
      });
      return {frames: gs.length, svgWidth: svg.width.baseVal.value, svgHeight: svg.height.baseVal.value,
              total: document.getElementById('total').textContent,
              status: document.getElementById('status').textContent, boxes};
    });
    let s = await state();
    seen.frames = s.frames;
    seen.height = s.svgHeight;
    seen.total = s.total;
    seen.overflowing = s.boxes.filter(b => b.label && b.lw > b.w - 2).map(b => b.name);
    // a label that is not the whole name: the whole name must not have fitted
    seen.cut_needlessly = s.boxes.filter(b => b.label && b.label !== b.name && b.fullFits).map(b => b.name);
    seen.shortened = s.boxes.filter(b => b.label && b.label !== b.name && !b.label.endsWith('\u2026'))
      .map(b => b.label).slice(0, 5);
    await page.type('#search', search);
    s = await state();
    seen.search_status = s.status;
    seen.search_matches = s.boxes.filter(b => b.match).map(b => b.name);
    await page.click('#search', {clickCount: 3});
    await page.keyboard.press('Backspace');
    const target = await page.$(`#flame g[data-name^="${zoomTo}"]`);
    if (target) {
      await target.click();
      s = await state();
      const z = s.boxes.find(b => b.name.startsWith(zoomTo));
      seen.zoom_total = s.total;
      seen.zoom_width = z ? z.w : 0;
      seen.full_width = s.svgWidth - 20;
    }
    await page.click('#reset');
    s = await state();
    seen.reset_total = s.total;
    await page.select('#type', 'objects');
    s = await state();
    seen.objects_total = s.total;
    await page.select('#type', 'bytes');
    await page.screenshot({path: png});
  } catch (e) {
    seen.errors.push(String(e));
  }
  await browser.close();
  console.log(JSON.stringify(seen));
})();
