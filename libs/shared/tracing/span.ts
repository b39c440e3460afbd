/** What traced code may do with a span (attribute values are ours: never tokens or payloads). */
export interface WireSpan {
  set(key: string, value: string | number | boolean): void
  /** Marks the span failed with Wire's error code (the message is not recorded). */
  fail(code: string): void
  end(): void
}
