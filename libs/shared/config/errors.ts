/** A bad environment or board file: the message names every bad setting. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}
