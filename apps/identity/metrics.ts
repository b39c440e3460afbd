import client from 'prom-client'

/** What the identity network did, by event: registered, verified, verify_refused, derived, rotated, transferred, claimed, decayed. */
export const identityEvents = new client.Counter({
  name: 'wire_identity_events_total',
  help: 'Identity network events (registered, verified, verify_refused, derived, rotated, transferred, transfer_refused, claimed, decayed)',
  labelNames: ['event'],
})
