-- The list counts' triggers add to an existing count row with a plain UPDATE (HOT: `n` is not
-- indexed) and insert only when the row is missing. The upsert they replace logged a lock of the
-- count row before its update on every statement of every writer (six per bill payment). Rows are
-- still written in key order, so two statements never lock two count rows in opposite orders; two
-- first writers of one row meet in the insert's ON CONFLICT as before.
-- Adds n to one count row: in place when it exists, inserted when missing (two first writers of a
-- row meet in the insert's ON CONFLICT).
CREATE OR REPLACE FUNCTION "list_counts_bump"(
  p_user_id uuid, p_environment "environment", p_list text, p_type text, p_status text, p_n bigint
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE list_counts c SET n = c.n + p_n
   WHERE c.user_id = p_user_id AND c.environment = p_environment AND c.list = p_list
     AND c.type = p_type AND c.status = p_status;
  IF NOT FOUND THEN
    INSERT INTO list_counts AS c (user_id, environment, list, type, status, n)
    VALUES (p_user_id, p_environment, p_list, p_type, p_status, p_n)
    ON CONFLICT (user_id, environment, list, type, status) DO UPDATE SET n = c.n + excluded.n;
  END IF;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "list_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d record;
BEGIN
  FOR d IN SELECT user_id, environment, type::text AS type, status::text AS status, count(*) AS n FROM changed_rows
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  LOOP
    PERFORM list_counts_bump(d.user_id, d.environment, TG_TABLE_NAME, d.type, d.status, d.n);
  END LOOP;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "list_counts_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d record;
BEGIN
  FOR d IN SELECT user_id, environment, type::text AS type, status::text AS status, -count(*) AS n FROM changed_rows
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  LOOP
    PERFORM list_counts_bump(d.user_id, d.environment, TG_TABLE_NAME, d.type, d.status, d.n);
  END LOOP;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "list_counts_move"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d record;
BEGIN
  FOR d IN SELECT user_id, environment, type, status, sum(delta) AS n FROM (
      SELECT user_id, environment, type::text AS type, status::text AS status, -1 AS delta FROM rows_before
      UNION ALL
      SELECT user_id, environment, type::text, status::text, 1 FROM rows_after
    ) moved
    GROUP BY 1, 2, 3, 4 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4
  LOOP
    PERFORM list_counts_bump(d.user_id, d.environment, TG_TABLE_NAME, d.type, d.status, d.n);
  END LOOP;
  RETURN NULL;
END
$$;
