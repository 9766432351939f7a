/**
 * Gives `to` every EXECUTE grant `from` has (the app's runtime role, see the README's database
 * roles), with its grant option, and none to PUBLIC unless `from` had one. A new signature is a
 * new function: without this, a runtime role granted the old one could no longer claim.
 */
export const copyExecuteGrants = (from: string, to: string): string => `
    DO $grants$
    DECLARE
      granted record;
    BEGIN
      EXECUTE 'REVOKE ALL ON FUNCTION ${to} FROM PUBLIC';
      FOR granted IN
        SELECT acl.grantee, acl.is_grantable
        FROM pg_catalog.pg_proc p,
             pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) acl
        WHERE p.oid = '${from}'::pg_catalog.regprocedure AND acl.privilege_type = 'EXECUTE'
      LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION ${to} TO %s%s',
          CASE WHEN granted.grantee = 0::pg_catalog.oid THEN 'PUBLIC'
               ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(granted.grantee)) END,
          CASE WHEN granted.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
      END LOOP;
    END
    $grants$`;
