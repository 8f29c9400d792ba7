"""What the `sql` tool's query may name: curated allowlists, checked against DuckDB's parse tree.

Everything here is an allowlist. A function, operator, table function, relation or parse-tree
node that is not listed is refused, so a DuckDB upgrade that adds a function adds nothing to
the tool until it is listed here. Left out on purpose, with the reason:

* every `anatid_*` native function but `anatid_version`: `anatid_graph_load`/`_build`,
  `anatid_ann_load`/`_build` plant generations in the process-wide caches (a forged one
  answers `context()` for the server's life) and the aggregates allocate outside DuckDB's
  memory limit; `*_resident`, `*_cache_stats`, `*_info` report process state; the table
  macros call them;
* functions that report the session, the process or the settings (`current_setting`,
  `current_query`, `current_database`, `getvariable`, `version`, `txid_current`, ...), or
  change state (`nextval`, `setval`, `setseed`, `write_log`), or sleep (`sleep_ms`, `pg_sleep`);
* SQL inside SQL (`query`, `query_table`, `json_serialize_sql`, `json_deserialize_sql`,
  `json_execute_serialized_sql`, `json_serialize_plan`);
* every file, glob and catalog table function (`read_*`, `glob`, `sniff_csv`, `duckdb_*`,
  `pragma_*`, `parquet_*`, `checkpoint`, `which_secret`, ...) and the system views over them
  (`duckdb_databases`, `pragma_database_list`, `pg_settings`, every `pg_catalog` view,
  `sqlite_master`): they show paths and settings;
* DuckDB internals (`__internal_*`, `to_aggregate_state`, `finalize`, `combine`, `error`,
  `invoke`, ...) and list-building `range`/`generate_series` scalars (the table functions
  of the same name stream rows and are allowed).
"""
from __future__ import annotations

# Operators, as the parser names them (`a LIKE b` is `~~`, `a || b` is `||`, `x!` is factorial).
OPERATORS = frozenset("""
+ - * / // % ** ^ & | ~ << >> @ || ~~ !~~ ~~* !~~* ~~~ ^@ ->> -> @> <@ && <-> <=> != = < > <= >= !__postfix
""".split())

SCALARS = frozenset("""
abs acos acosh asin asinh atan atan2 atanh cbrt ceil ceiling cos cosh cot degrees even exp factorial
floor fmod gamma gcd greatest greatest_common_divisor isfinite isinf isnan lcm least
least_common_multiple lgamma ln log log10 log2 mod nextafter pi pow power radians random round
round_even roundbankers sign signbit sin sinh sqrt tan tanh trunc xor bit_count bit_length
bit_position get_bit set_bit add subtract multiply divide fdiv
ascii bar base64 chr concat concat_ws contains damerau_levenshtein decode editdist3 encode
ends_with format format_bytes formatreadabledecimalsize formatreadablesize from_base64 from_binary
from_hex hamming hash hex ilike_escape instr jaccard jaro_similarity jaro_winkler_similarity lcase
left left_grapheme len length length_grapheme levenshtein like_escape lower lpad ltrim md5
md5_number md5_number_lower md5_number_upper mismatches nfc_normalize not_ilike_escape
not_like_escape octet_length ord overlay position prefix printf regexp_escape regexp_extract
regexp_extract_all regexp_full_match regexp_matches regexp_replace regexp_split_to_array repeat
replace reverse right right_grapheme rpad rtrim sha1 sha256 split split_part starts_with str_split
str_split_regex strip_accents strlen strpos string_split string_split_regex string_to_array substr
substring substring_grapheme suffix to_base to_base64 to_binary to_hex translate trim ucase unbin
unhex unicode upper url_decode url_encode char_length character_length parse_dirname parse_dirpath
parse_filename parse_path
age century current_date current_localtime current_localtimestamp date_add date_diff date_part
date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth dayofweek dayofyear
days_in_month decade epoch epoch_ms epoch_ns epoch_us era get_current_time get_current_timestamp
hour isodow isoyear julian last_day make_date make_time make_timestamp make_timestamp_ms
make_timestamp_ns make_timestamptz microsecond millennium millisecond minute month monthname
nanosecond normalized_interval now quarter second strftime strptime time_bucket timezone
timezone_hour timezone_minute to_centuries to_days to_decades to_hours to_microseconds
to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds to_timestamp to_weeks
to_years today transaction_timestamp try_strptime week weekday weekofyear year yearweek ago
current_time current_timestamp localtime localtimestamp
aggregate apply array_aggr array_aggregate array_append array_apply array_cat array_concat
array_contains array_cosine_distance array_cosine_similarity array_cross_product array_distance
array_distinct array_dot_product array_extract array_filter array_grade_up array_has array_has_all
array_has_any array_indexof array_inner_product array_intersect array_length
array_negative_dot_product array_negative_inner_product array_pop_back array_pop_front
array_position array_prepend array_push_back array_push_front array_reduce array_reverse
array_reverse_sort array_select array_slice array_sort array_to_string array_transform
array_unique array_value array_where array_zip cardinality element_at filter flatten grade_up
list_aggr list_aggregate list_any_value list_append list_apply list_approx_count_distinct
list_avg list_bit_and list_bit_or list_bit_xor list_bool_and list_bool_or list_cat list_concat
list_contains list_cosine_distance list_cosine_similarity list_count list_distance list_distinct
list_dot_product list_element list_entropy list_extract list_filter list_first list_grade_up
list_has list_has_all list_has_any list_histogram list_indexof list_inner_product list_intersect
list_kurtosis list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode
list_negative_dot_product list_negative_inner_product list_pack list_position list_prepend
list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem
list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum
list_transform list_unique list_value list_var_pop list_var_samp list_where list_zip reduce
generate_subscripts unnest
map map_concat map_contains map_contains_entry map_contains_value map_entries map_extract
map_extract_value map_from_entries map_keys map_values row struct_concat struct_contains
struct_extract struct_extract_at struct_has struct_indexof struct_insert struct_keys struct_pack
struct_position struct_update struct_values union_extract union_tag union_value
enum_code enum_first enum_last enum_range enum_range_boundary
array_to_json from_json from_json_strict json json_array json_array_length json_contains
json_exists json_extract json_extract_path json_extract_path_text json_extract_string json_keys
json_merge_patch json_object json_pretty json_quote json_structure json_transform
json_transform_strict json_type json_valid json_value row_to_json to_json
if nullif coalesce ifnull typeof alias gen_random_uuid uuid uuidv4 uuidv7 uuid_extract_timestamp
uuid_extract_version equi_width_bins grouping grouping_id
""".split())

AGGREGATES = frozenset("""
any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg avg bit_and
bit_or bit_xor bitstring_agg bool_and bool_or corr count count_if count_star countif covar_pop
covar_samp entropy favg first fsum geomean geometric_mean group_concat histogram histogram_exact
kahan_sum kurtosis kurtosis_pop last list listagg mad max max_by mean median min min_by mode
product quantile quantile_cont quantile_disc regr_avgx regr_avgy regr_count regr_intercept regr_r2
regr_slope regr_sxx regr_sxy regr_syy reservoir_quantile sem skewness stddev stddev_pop stddev_samp
string_agg sum sumkahan var_pop var_samp variance wavg weighted_avg json_group_array
json_group_object json_group_structure
""".split())

WINDOWS = frozenset("""
cume_dist dense_rank fill first_value lag last_value lead nth_value ntile percent_rank rank
rank_dense row_number
""".split())

# The only anatid_* function allowed: it reports the extension's version and nothing else.
ANATID_ALLOWED = frozenset({"anatid_version"})

FUNCTIONS = OPERATORS | SCALARS | AGGREGATES | WINDOWS | ANATID_ALLOWED

# Table functions that produce values from their arguments alone.
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "json_each", "json_tree"})

# information_schema views checked to show names and types only, never a path or a setting.
INFORMATION_SCHEMA = frozenset({"tables", "columns"})

# The prefix of the relations the tool reads: the file's own anatid tables.
RELATION_PREFIX = "anatid_"

# Parse-tree vocabulary. An expression class, operator type, query node or table reference
# type that is not listed here is refused, so a parser change fails closed.
EXPRESSION_CLASSES = frozenset({
    "BETWEEN", "CASE", "CAST", "COLLATE", "COLUMN_REF", "COMPARISON", "CONJUNCTION", "CONSTANT",
    "FUNCTION", "LAMBDA", "LAMBDA_REF", "OPERATOR", "POSITIONAL_REFERENCE", "STAR", "SUBQUERY",
    "WINDOW", "TYPE",
})
OPERATOR_TYPES = frozenset({
    "ARRAY_EXTRACT", "ARRAY_SLICE", "ARRAY_CONSTRUCTOR", "STRUCT_EXTRACT", "COMPARE_IN",
    "COMPARE_NOT_IN", "GROUPING_FUNCTION", "OPERATOR_COALESCE", "OPERATOR_IS_NULL",
    "OPERATOR_IS_NOT_NULL", "OPERATOR_NOT", "OPERATOR_TRY", "OPERATOR_UNPACK", "OPERATOR_NULLIF",
})
QUERY_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "CTE_NODE", "RECURSIVE_CTE_NODE"})
TABLE_REFS = frozenset({"BASE_TABLE", "TABLE_FUNCTION", "SUBQUERY", "JOIN", "EXPRESSION_LIST",
                        "EMPTY", "EMPTY_FROM", "PIVOT", "SHOW_REF"})
# SHOW TABLES and SHOW DATABASES (names only); DESCRIBE and SUMMARIZE carry a query, scanned.
SHOW_SPECIALS = frozenset({'"tables"', '"databases"', "tables", "databases"})
