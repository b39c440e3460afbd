/**
 * A body read whole, its bytes counted as they arrive: null once they pass `max`, the rest unread
 * (leaving the loop cancels a web stream and destroys a Node one).
 */
export async function readUpTo(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer | null> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > max) return null
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
