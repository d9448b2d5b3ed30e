/** The overview's chart: the last days' collections as server-rendered SVG, readable without it too. */
import { html, type SafeHtml } from '../../../core/html.ts';
import type { DayFigures } from '../../../core/store/index.ts';
import { rm } from './format.ts';

const WIDTH = 600;
const HEIGHT = 160;
const AXIS = 20;

/**
 * A bar per day of collected ringgit. The SVG has a title and a description (the total and the best day),
 * scales to its container's width keeping its proportions (viewBox), and each bar names its day and amount in a <title> for pointer users;
 * the figures themselves are also in the table beside it.
 */
export function collectionsChart(days: readonly DayFigures[]): SafeHtml {
  const max = Math.max(1, ...days.map((d) => d.collected.sumSen));
  const total = days.reduce((sum, d) => sum + d.collected.sumSen, 0);
  const best = days.reduce<DayFigures | undefined>(
    (top, d) => (!top || d.collected.sumSen > top.collected.sumSen ? d : top),
    undefined,
  );
  const slot = WIDTH / Math.max(1, days.length);
  const bars = days.map((d, i) => {
    const h = Math.round((d.collected.sumSen / max) * (HEIGHT - AXIS));
    return html`<rect
      x="${(i * slot + slot * 0.15).toFixed(1)}"
      y="${HEIGHT - AXIS - h}"
      width="${(slot * 0.7).toFixed(1)}"
      height="${h}"
      fill="#1f6f5c"
      ><title>${d.day}: ${rm(d.collected.sumSen)}</title></rect
    >`;
  });
  const first = days[0]?.day ?? '';
  const last = days.at(-1)?.day ?? '';
  const description =
    `${rm(total)} collected from ${first} to ${last}` +
    (best && best.collected.sumSen > 0 ? `; the most on ${best.day}, ${rm(best.collected.sumSen)}.` : '.');
  return html`<figure class="chart">
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" width="100%">
      <title id="chart-title">Collections per day, last ${days.length} days</title>
      <desc id="chart-desc">${description}</desc>
      <line x1="0" y1="${HEIGHT - AXIS}" x2="${WIDTH}" y2="${HEIGHT - AXIS}" stroke="#555" stroke-width="1" />
      ${bars}
      <text x="0" y="${HEIGHT - 4}" font-size="12" fill="#333">${first}</text>
      <text x="${WIDTH}" y="${HEIGHT - 4}" font-size="12" fill="#333" text-anchor="end">${last}</text>
    </svg>
    <figcaption>${description}</figcaption>
  </figure>`;
}
