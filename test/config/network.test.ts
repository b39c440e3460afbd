import t from 'tap'
import { networkConfigs } from '../../apps/server/network-config.js'

// WIRE_NETWORK_BOARDS: the settings each role of a network in one process gets from one environment
// (the process itself: test/onboarding/network-in-one.test.ts).

t.test('each role gets its own port, schema and name; the boards verify with the identity network', async (t) => {
  const n = networkConfigs({ WIRE_NETWORK_BOARDS: '2', PUBLIC_WIRE_HOST: 'board.example', AGGREGATOR_ALLOW_HOSTS: '10.0.0.0/8' })
  t.same(
    n.boards.map((b) => [b.port, b.authority, b.db.schema, b.boardName]),
    [
      [4000, 'localhost:4000', 'board_a', 'board-a'],
      [4001, 'localhost:4001', 'board_b', 'board-b'],
    ],
    'boards on SERVER_PORT and the next port, named localhost:<port> whatever PUBLIC_WIRE_HOST says',
  )
  t.same(
    n.boards.map((b) => [b.identity.mode === 'network' && b.identity.url, b.aggregatorUrl]),
    [
      ['http://localhost:4200', 'http://localhost:4100'],
      ['http://localhost:4200', 'http://localhost:4100'],
    ],
  )
  t.same(
    [n.identity.port, n.identity.identity.mode, n.aggregator.port, n.aggregator.identity.mode === 'network' && n.aggregator.identity.url],
    [4200, 'local', 4100, 'http://localhost:4200'],
  )
  t.same(
    n.aggregator.aggregator.allowHosts,
    { hosts: ['localhost'], cidrs: ['10.0.0.0/8'] },
    'the aggregator may reach the boards on loopback, and what the operator allowed',
  )
  t.same(
    networkConfigs({ WIRE_NETWORK_BOARDS: '1', WIRE_PG_SCHEMA: 'trial' }).boards.map((b) => b.db.schema),
    ['trial_a'],
    'WIRE_PG_SCHEMA, when set, names the boards’ schemas',
  )
  t.throws(
    () => networkConfigs({ WIRE_NETWORK_BOARDS: '2', SERVER_PORT: '0' }),
    /SERVER_PORT: a network in one process needs 2 fixed ports/,
  )
  t.throws(
    () => networkConfigs({ WIRE_NETWORK_BOARDS: '2', WIRE_NETWORK_IDENTITY_PORT: '4001' }),
    /must differ from each other and from the boards' ports 4000, 4001/,
  )
  t.throws(
    () => networkConfigs({ WIRE_NETWORK_BOARDS: '1', SERVER_HOST: '10.1.2.3' }),
    /SERVER_HOST: a network in one process listens on loopback/,
  )
  t.throws(() => networkConfigs({ WIRE_NETWORK_BOARDS: '10' }), /WIRE_NETWORK_BOARDS: must be a whole number from 0 to 9/)
})
