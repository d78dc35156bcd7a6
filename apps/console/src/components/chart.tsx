/**
 * The amount by hour (today) or by day, drawn by uPlot (a small canvas chart, ~20 KB gzipped,
 * loaded only with this chunk). The canvas is an image to assistive technology, labelled with what
 * it shows; the same figures are in the table beneath it.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatMinor, minorDigits, type UiLanguage } from '../format/money.ts';

export interface ChartProps {
  /** One bar per bucket, in order, with its label (the hour or the day). */
  bars: Array<{ label: string; amountMinor: number }>;
  currency: string;
  lang: UiLanguage;
  label: string;
}

export default function Chart({ bars, currency, lang, label }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const scale = 10 ** minorDigits(currency);
    const xs = bars.map((_, i) => i);
    // An empty bucket draws no bar (null), rather than a flat line.
    const ys = bars.map((b) => (b.amountMinor === 0 ? null : b.amountMinor / scale));
    const rtl = lang === 'he';
    const width = () => Math.max(260, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        legend: { show: false },
        cursor: { show: false },
        scales: {
          x: { time: false, dir: rtl ? -1 : 1, range: [-0.5, Math.max(0.5, bars.length - 0.5)] },
          y: { range: (_u, _min, max) => [0, Math.max(1, (max ?? 0) * 1.1)] },
        },
        axes: [
          {
            stroke: '#222',
            grid: { show: false },
            incrs: [1, 2, 3, 4, 6, 12],
            values: (_u, splits) => splits.map((s) => bars[s]?.label ?? ''),
          },
          {
            stroke: '#222',
            side: rtl ? 1 : 3,
            size: 90,
            values: (_u, splits) => splits.map((s) => formatMinor(Math.round(s * scale), currency, lang)),
          },
        ],
        series: [
          {},
          {
            label,
            stroke: '#1f4e79',
            fill: 'rgba(31, 78, 121, 0.6)',
            paths: uPlot.paths.bars?.({ size: [0.7, 40] }),
            points: { show: false },
          },
        ],
      },
      [xs, ys],
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height: 240 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [bars, currency, lang, label]);
  return <div ref={box} className="chart" role="img" aria-label={label} data-testid="chart" />;
}
