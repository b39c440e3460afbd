#!/usr/bin/env node
// `wire`, the @wire-board/cli package's one command. The command line's code ships inside
// @wire-board/server (its operator commands, `migrate` and `check-config`, are the server's own
// code, on the server's settings); this package gives it its name without clashing with anything.
// The Node.js version is checked there, before any command runs.
await import('@wire-board/server/cli')
