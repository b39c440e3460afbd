#!/usr/bin/env node
// npm run embedded:template: makes libs/shared/db/pglite-template.tgz, the pristine embedded database
// a first start loads instead of running initdb (libs/shared/db/pglite-template.ts). Run it after
// changing the PGlite version; test/db/pglite-template.test.ts fails until it is run.
import { pgliteDb } from '../dist/libs/shared/db/index.js'
import { writeTemplate, TEMPLATE_FILE } from '../dist/libs/shared/db/pglite-template.js'

const db = await pgliteDb('memory://', { template: false })
const bytes = await writeTemplate(db.pglite)
await db.close()
console.log(`wrote ${TEMPLATE_FILE} (${(bytes / 2 ** 20).toFixed(1)} MiB)`)
