-- Parameters: $1 from, $2 limit, $3 type, $4 origin, $5 tags, $6 q, $7 sinceMs, $8 includeExpired, $9 cutoff, $10 refId, $11 batch, $12 authority.
-- from: the cursor (after) or the page's upper bound (before; unused from the head); limit: the page size;
-- batch: candidates to examine; cutoff: the expiry cutoff; authority: the board's (JSON select list);
-- the others are the read's filters (tags as text[], q lower-cased, sinceMs as a timestamp).
-- tags: {"tag":"ops,review"}, the page after a cursor (drive: tag)
with h as (select seq as head, changes, failover_seq as epoch, $1::int8 as p1, $2::int8 as p2, $11::int8 as p11, $3::text as p3, $5::text[] as p5, $4::text as p4, $6::text as p6, $7::timestamptz as p7, $8::bool as p8, $10::text as p10 from "wire".feed_head limit 1),
    c as materialized (select x.* from (
           select distinct g.seq from unnest($5::text[]) t(tag) cross join lateral (
             select g.seq from "wire".signal_tags g where g.tag = t.tag and g.seq > $1::int8 order by g.seq asc limit 400
           ) g order by g.seq asc limit 400
         ) k join "wire".signals x on x.seq = k.seq),
    p as (select '{"id":' || to_json(x.id)::text || ',"uri":' || to_json('sw://' || $12::text || '/signals/' || x.id)::text || ',"origin":' || to_json(x.origin)::text || ',"originName":' || coalesce(to_json(x.origin_name)::text, 'null') || ',"originUri":' || to_json(x.origin_uri)::text || ',"originVerified":' || x.origin_verified::text || ',"type":' || to_json(x.type)::text || ',"tags":' || array_to_json(x.tags)::text || ',"payload":' || x.payload || ',"ttl":' || x.ttl_seconds::text || ',"boostBits":0,"pinned":' || x.pinned::text || ',"refId":' || coalesce(to_json(x.ref_id)::text, 'null') || ',"refUri":' || coalesce(to_json('sw://' || $12::text || '/signals/' || x.ref_id)::text, 'null') || ',"createdAt":"' || to_char(date_trunc('milliseconds', x.created_at + interval '0.5 milliseconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","expiresAt":"' || to_char(date_trunc('milliseconds', x.expires_at + interval '0.5 milliseconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}' as json, x.seq as page_seq from c x where x.removed_at is null and (x.pinned or x.expires_at > $9::timestamptz) order by x.seq asc limit 100)
    select h.head, h.changes, h.epoch, (select count(*) from c) as n, (select max(seq) from c) as edge, p.*
    from h left join p on true order by p.page_seq asc;
