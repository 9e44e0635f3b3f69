// Laying out a course's unit graph: each unit one row below its deepest
// prerequisite, rows in teaching order, edges from prerequisite to unit.

export interface GraphUnit {
  unitId: string;
  title: string;
  requires: string[];
}

export interface PlacedUnit<U extends GraphUnit> {
  unit: U;
  x: number;
  y: number;
  layer: number;
}

export interface Layout<U extends GraphUnit> {
  nodes: PlacedUnit<U>[];
  edges: { from: PlacedUnit<U>; to: PlacedUnit<U> }[];
  width: number;
  height: number;
}

// Narrow boxes with three short lines keep a five-wide row near the page's
// width, so titles stay readable when the picture is scaled to fit.
export const NODE = { w: 144, h: 70, gapX: 14, gapY: 56, pad: 16, line: 17 };

export function layout<U extends GraphUnit>(units: U[]): Layout<U> {
  const byId = new Map(units.map((u) => [u.unitId, u]));
  const depth = new Map<string, number>();
  const depthOf = (id: string, seen: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0; // the server validates the graph acyclic
    seen.add(id);
    const reqs = (byId.get(id)?.requires ?? []).filter((r) => byId.has(r));
    const d = reqs.length ? 1 + Math.max(...reqs.map((r) => depthOf(r, seen))) : 0;
    depth.set(id, d);
    return d;
  };
  const layers: U[][] = [];
  for (const u of units) {
    const d = depthOf(u.unitId, new Set());
    (layers[d] ??= []).push(u);
  }
  const widest = Math.max(1, ...layers.map((l) => l?.length ?? 0));
  const width = NODE.pad * 2 + widest * NODE.w + (widest - 1) * NODE.gapX;
  const placed = new Map<string, PlacedUnit<U>>();
  layers.forEach((row, layer) => {
    const rowWidth = row.length * NODE.w + (row.length - 1) * NODE.gapX;
    const left = (width - rowWidth) / 2;
    row.forEach((unit, i) => {
      placed.set(unit.unitId, {
        unit,
        layer,
        x: left + i * (NODE.w + NODE.gapX),
        y: NODE.pad + layer * (NODE.h + NODE.gapY),
      });
    });
  });
  const nodes = [...placed.values()];
  const edges = nodes.flatMap((to) =>
    to.unit.requires.flatMap((r) => {
      const from = placed.get(r);
      return from ? [{ from, to }] : [];
    }),
  );
  const height = NODE.pad * 2 + layers.length * NODE.h + (layers.length - 1) * NODE.gapY;
  return { nodes, edges, width, height };
}

/** A title in at most `most` lines of about `max` characters. */
export function wrap(title: string, max = 17, most = 3): string[] {
  const words = title.split(/\s+/);
  const lines: string[] = [''];
  for (const w of words) {
    const line = lines[lines.length - 1]!;
    if (line && (line + ' ' + w).length > max) {
      if (lines.length === most) {
        lines[most - 1] = `${line}…`;
        return lines;
      }
      lines.push(w);
    } else {
      lines[lines.length - 1] = line ? `${line} ${w}` : w;
    }
  }
  return lines;
}
