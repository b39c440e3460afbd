// The tag index of one chunk of the chunk cache (chunk-cache.ts): which of its signals carry a tag.

const NONE = new Uint16Array(0)

/** Each tag's positions in a chunk, ascending: tag `ids.get(t)` has `pos[starts[id]…starts[id + 1]]` (one small map and two arrays a chunk). */
export interface TagIndex {
  ids: Map<string, number>
  starts: Uint32Array
  pos: Uint16Array
}

export function indexTags(tags: string[][]): TagIndex {
  const ids = new Map<string, number>()
  const counts: number[] = []
  for (const ts of tags)
    for (const t of ts) {
      const id = ids.get(t)
      if (id === undefined) ids.set(t, counts.push(1) - 1)
      else counts[id]!++
    }
  const starts = new Uint32Array(counts.length + 1)
  for (let i = 0; i < counts.length; i++) starts[i + 1] = starts[i]! + counts[i]!
  const next = starts.slice(0, -1)
  const pos = new Uint16Array(starts[counts.length]!)
  tags.forEach((ts, p) => {
    for (const t of ts) pos[next[ids.get(t)!]!++] = p
  })
  return { ids, starts, pos }
}

/** The positions of `tag`'s signals in the chunk, ascending (a view, no copy). */
export function tagPositions(x: TagIndex, tag: string): Uint16Array {
  const id = x.ids.get(tag)
  return id === undefined ? NONE : x.pos.subarray(x.starts[id], x.starts[id + 1])
}
