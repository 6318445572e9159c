/* nsorterrno.h - the status codes of Nsort's subroutine library (nsort_msg_t), under Nsort's
 * names and with Nsort's numbers, so that a program written for Nsort compiles and tests the codes
 * it knows. nsort.h includes this file; a program need not include it itself.
 *
 * Every name Nsort's own nsorterrno.h defines is here, most of them only so that such programs
 * compile: the codes libxsort actually returns are marked "libxsort:", with when. A failure that
 * Nsort has no number for comes back as one of xsort's own codes, below -1000 (xsort.h names
 * them: XSORT_CONFIG_ERROR, XSORT_IO_ERROR, XSORT_BAD_INPUT, XSORT_PROGRAM_ERROR,
 * XSORT_INTERNAL_ERROR, XSORT_RESOURCE_ERROR); NSORT_MSG_IS_ERROR holds for them too.
 *
 * This file is written by hand, not generated; crates/capi/tests/header.rs checks its values
 * against the library's.
 */

#ifndef NSORTERRNO_H
#define NSORTERRNO_H

/* How to read a status: 0 is success; a negative one is an error, after which the sort does not go
 * on; from NSORT_FIRST_WARNING up, a warning (the sort goes on, and NSORT_END_OF_OUTPUT counts as
 * one); from NSORT_FIRST_INFO up, information. */
#define NSORT_SUCCESS                       0
#define NSORT_FIRST_WARNING                 1
#define NSORT_FIRST_INFO                    10000

#define NSORT_MSG_IS_ERROR(msg)   ((msg) < 0)
#define NSORT_MSG_IS_WARNING(msg) ((msg) >= NSORT_FIRST_WARNING && (msg) < NSORT_FIRST_INFO)
#define NSORT_MSG_IS_INFO(msg)    ((msg) >= NSORT_FIRST_INFO)

/* ---- Errors: negative. ---- */

/* -1 .. -79: statements: their syntax, and the fields, keys, record formats, files
 * and resources they name. Nsort finds these in nsort_define, before taking any record. */
#define NSORT_STATEMENT_START               (-1)
#define NSORT_COLON_EXPECTED                (-2)
#define NSORT_COMMA_EXPECTED                (-3)
#define NSORT_UNEXPECTED_IN_LIST            (-4)
#define NSORT_PAREN_EXPECTED_BEFORE         (-5)
#define NSORT_PAREN_EXPECTED_AFTER          (-6)
#define NSORT_AMBIGUOUS_IDENTIFIER          (-7)
#define NSORT_UNEXPECTED_KEYWORD            (-8)
#define NSORT_UNKNOWN_KEYWORD               (-9)   /* libxsort: no such statement */
#define NSORT_IO_ERROR                      (-10)
#define NSORT_NEEDS_POSITIVE_INT            (-11)
#define NSORT_SCALE_OVERFLOW                (-12)
#define NSORT_TYPE_MISMATCH                 (-13)
#define NSORT_TYPE_WITHOUT_SIZE             (-14)
#define NSORT_EXTENDS_PAST_END              (-15)
#define NSORT_UNSIGNED_WITHOUT_TYPE         (-16)
#define NSORT_FIELD_NEEDS_EQ                (-17)
#define NSORT_METHOD_NEEDS_EQ               (-18)
#define NSORT_SPECIFICATION_NEEDS_EQ        (-19)
#define NSORT_FIELD_ALREADY_NAMED           (-20)
#define NSORT_BAD_FIELD_NAME                (-21)
#define NSORT_BAD_REC_SIZE                  (-22)
#define NSORT_BAD_REC_SIZE_SPEC             (-23)
#define NSORT_REC_MUST_BE_VARLEN            (-24)
#define NSORT_MAXLEN_NEEDS_INT              (-25)
#define NSORT_MAXLEN_INVALID                (-26)
#define NSORT_MINLEN_NEEDS_INT              (-27)
#define NSORT_MINLEN_INVALID                (-28)
#define NSORT_CHARACTER_NEEDED              (-29)
#define NSORT_TYPE_NOT_DELIMITABLE          (-30)
#define NSORT_FIELD_ALREADY_TYPED           (-31)
#define NSORT_FLOAT_SIZE                    (-32)
#define NSORT_DOUBLE_SIZE                   (-33)
#define NSORT_PACKED_TOO_LONG               (-34)
#define NSORT_FIELD_TOO_SHORT               (-35)
#define NSORT_POSITION_NEEDED               (-36)
#define NSORT_DUPLICATE_FIELDNAME           (-37)
#define NSORT_FIELD_SIZE_NEEDED             (-38)
#define NSORT_NO_LICENSE                    (-39)
#define NSORT_FIELD_ALREADY_SIZED           (-40)
#define NSORT_FIELD_ALREADY_DELIMITED       (-41)
#define NSORT_FIELD_SYNTAX                  (-42)
#define NSORT_POSITION_POSITIVE             (-43)
#define NSORT_KEY_FIELD_MISSING             (-44)
#define NSORT_KEY_ALREADY_TYPED             (-45)
#define NSORT_MMAP_ZERO_FAILED              (-46)
#define NSORT_REDUNDANT_ORDERING            (-47)
#define NSORT_KEY_SYNTAX                    (-48)
#define NSORT_KEY_NUMBER                    (-49)
#define NSORT_KEY_NUMBER_INVALID            (-50)
#define NSORT_KEY_NUMBER_DUPLICATE          (-51)
#define NSORT_DERIVED_NEEDS_VALUE           (-52)
#define NSORT_FIELD_MISSING                 (-53)
#define NSORT_NON_NUMERIC_DERIVED           (-54)
#define NSORT_NON_STRING_DERIVED            (-55)
#define NSORT_PAGESIZE_POW2                 (-56)
#define NSORT_SUMMARIZE_FIELD_MISSING       (-57)
#define NSORT_OPEN_FAILED                   (-58)
#define NSORT_MEMORY_NEEDED                 (-59)
#define NSORT_IOSIZE_UNALIGNED              (-60)
#define NSORT_IOSIZE_TOO_LARGE              (-61)
#define NSORT_LICENSE_FAILURE               (-62)
#define NSORT_LICENSE_MALFORMED             (-63)
#define NSORT_CPU_REQ_NEEDED                (-64)
#define NSORT_ONLY_FIXED_EDITING            (-65)
#define NSORT_CAT_ONLY_ONE                  (-66)
#define NSORT_FORMAT_SPEC                   (-67)
#define NSORT_BAD_METHOD                    (-68)
#define NSORT_BAD_HASHSPEC                  (-69)
#define NSORT_VARIABLE_NEEDS_KEY            (-70)
#define NSORT_BAD_CHARACTER_SPEC            (-71)
#define NSORT_CHARACTER_TOO_LARGE           (-72)
#define NSORT_MISSING_QUOTE                 (-73)
#define NSORT_FILENAME_MISSING              (-74)
#define NSORT_FILESYS_NAME_MISSING          (-75)
#define NSORT_SUMMARIZE_DUPLICATES          (-76)
#define NSORT_NOT_STATEMENT                 (-77)
#define NSORT_EXTRA_INSIDE_STATEMENT        (-78)
#define NSORT_EXTRA_AFTER_STATEMENT         (-79)

/* -80 .. -102: records that break their declared format; the files and memory of a
 * running sort. */
#define NSORT_EXTRA_REFORMAT                (-80)
#define NSORT_RECORD_SORTS_VARLEN           (-81)
#define NSORT_RECORD_SORT_TOO_LARGE         (-82)
#define NSORT_RECORD_TOO_LONG               (-83)
#define NSORT_RECORD_TOO_SHORT              (-84)
#define NSORT_REFORMAT_TOO_FAR              (-85)
#define NSORT_PARTIAL_RECORD                (-86)  /* libxsort: not whole records released */
#define NSORT_DELIM_MISSING                 (-87)
#define NSORT_RADIX_PREHASH_INCOMPAT        (-88)
#define NSORT_FIELD_BEYOND_END              (-89)
#define NSORT_PAST_MEMORY_LIMIT             (-90)
#define NSORT_SPEC_OPEN                     (-91)
#define NSORT_SPEC_TOO_DEEP                 (-92)
#define NSORT_INPUT_OPEN                    (-93)
#define NSORT_OUTPUT_OPEN                   (-94)
#define NSORT_FILESYS_ERRNO                 (-95)
#define NSORT_TEMPFILE_STAT                 (-96)
#define NSORT_TEMPFILE_BAD_TYPE             (-97)
#define NSORT_TEMPFILE_OPEN                 (-98)
#define NSORT_MAX_LT_MIN                    (-99)
#define NSORT_FIELD_MAX_ONLY_SEP            (-100)
#define NSORT_HASH_WITHOUT_RADIX            (-101)
#define NSORT_MEMORY_TOO_SMALL              (-102)

/* -103 .. -112: the calls themselves: contexts, arguments, and a sort that can no longer go on. */
#define NSORT_INVALID_CONTEXT               (-103) /* libxsort: no such context, or ended */
#define NSORT_INVALID_ARGUMENT              (-104) /* libxsort: NULL pointer, unknown option */
#define NSORT_FIELD_EXCEEDS_MAX             (-105)
#define NSORT_MALLOC_FAIL                   (-106)
#define NSORT_APIFILES                      (-107)
#define NSORT_INTERNAL_NO_MEM               (-108)
#define NSORT_KEY_BEYOND_END                (-109) /* libxsort: key past the record's end */
#define NSORT_ERROR_IGNORED                 (-110)
#define NSORT_CANCELLED                     (-111)
#define NSORT_CANT_SEEK                     (-112)

/* -113 .. -129: more statement checks (numbers, strings, keys); merges of presorted
 * input; appending to the output; SGI's memory placement. */
#define NSORT_INT_SIZE                      (-113)
#define NSORT_SUMMARY_NEEDS_INT             (-114)
#define NSORT_POSITION_REQUIRED             (-115)
#define NSORT_SYNTAX_ERROR                  (-116) /* libxsort: any other bad statement */
#define NSORT_EXTRA_HEX_DIGIT               (-117)
#define NSORT_BAD_HEX_DIGIT                 (-118)
#define NSORT_STRING_TOO_LONG               (-119)
#define NSORT_MISSING_DOUBLE_QUOTE          (-120)
#define NSORT_TOO_MANY_KEYS                 (-121)
#define NSORT_SUMMARIZED_KEY                (-122)
#define NSORT_MERGE_MISORDERED              (-123) /* libxsort: an input of -merge out of order */
#define NSORT_MERGE_NOEDIT                  (-124)
#define NSORT_APPEND_CHANGED                (-125) /* libxsort: -out_file=PATH,append changed meanwhile */
#define NSORT_APPEND_NOSTDOUT               (-126)
#define NSORT_MLD_CREATE                    (-127)
#define NSORT_MLDSET_CREATE                 (-128)
#define NSORT_MLDSET_PLACE                  (-129)

/* -130 .. -142: conditions: boolean terms and the regular expressions they may hold. */
#define NSORT_TERM_SYNTAX                   (-130)
#define NSORT_RE_RANGE_END                  (-131)
#define NSORT_RE_BAD_NUMBER                 (-132)
#define NSORT_RE_DIGIT_RANGE                (-133)
#define NSORT_RE_DELIMITER                  (-134)
#define NSORT_RE_REMEMBERED                 (-135)
#define NSORT_RE_PAREN_IMBALANCE            (-136)
#define NSORT_RE_TOO_MANY_PARENS            (-137)
#define NSORT_RE_TOO_MANY_NUMS              (-138)
#define NSORT_RE_BRACE_EXPECTED             (-139)
#define NSORT_RE_NUM_PAIR                   (-140)
#define NSORT_RE_BKT_IMBALANCE              (-141)
#define NSORT_RE_EXPBUF_OVERFLOW            (-142)

/* -143 .. -181: reformatting, derived values, separated (POSIX-style) fields, and memory limits. */
#define NSORT_GENERATE_COUNT                (-143)
#define NSORT_REFORMAT_FIELD_MISSING        (-144)
#define NSORT_EXPECTED_THEN                 (-145)
#define NSORT_FIELD_REMOVED                 (-146)
#define NSORT_EXPECTED_ELSE                 (-147)
#define NSORT_TYPE_CHANGED                  (-148)
#define NSORT_REFORMAT_KEY_MISSING          (-149)
#define NSORT_EXCESSIVE_CONSTANT            (-150)
#define NSORT_RECURSIVE_DERIVED             (-151)
#define NSORT_REFORMAT_FIELD_BOOL           (-152)
#define NSORT_MONTH_TOO_SHORT               (-153)
#define NSORT_FILTER_INCOMPAT_KEYS          (-154)
#define NSORT_INCOMPAT_RECORD_TYPE          (-155)
#define NSORT_PADTYPES_DIFFER               (-156)
#define NSORT_RECORD_MTBUF_SIZE             (-157)
#define NSORT_UNSUPPORTED_MERGE_SELECTOR    (-158)
#define NSORT_MISSPELLED_KEYWORD            (-159)
#define NSORT_STRING_EXPECTED               (-160)
#define NSORT_FILTER_CANNOT_GROW            (-161)
#define NSORT_UNUSED_REFORMAT               (-162)
#define NSORT_BAD_DELIM_MOD                 (-163)
#define NSORT_COL_DOT_OFF                   (-164)
#define NSORT_IMPLICIT_DERIVED_REFORMAT     (-165)
#define NSORT_BAD_FIELD_SIZE                (-166)
#define NSORT_REFORMAT_KEY_UNNAMED          (-167)
#define NSORT_REFORMAT_FIXED_STREAM         (-168)
#define NSORT_DELIMFIELDS_DEPRECATED        (-169)
#define NSORT_FIELD_ALREADY_POSITIONED      (-170)
#define NSORT_REFORMAT_DELIMITED            (-171)
#define NSORT_KEY_EXCEEDS_MAX               (-172)
#define NSORT_REMAINDER_REFORMAT            (-173)
#define NSORT_BINARY_IN_DELIMITED           (-174)
#define NSORT_SUMMARIZE_NEEDS_KEY           (-175)
#define NSORT_LOGICAL_EXPR_NEEDED           (-176)
#define NSORT_UNSUPP_CHANGE_RECORD          (-177)
#define NSORT_CANNOT_DETERMINE_POSITION     (-178)
#define NSORT_OUT_OF_SWAP                   (-179)
#define NSORT_RESOURCE_LIMITED              (-180)
#define NSORT_32BIT_LIMITED                 (-181)

/* -182 .. -194: system calls, locks and threads; comparison functions, and merges fed by
 * callbacks. */
#define NSORT_SYSCALL                       (-182)
#define NSORT_INVALID_PHASE                 (-183) /* libxsort: call out of order */
#define NSORT_LOCK_FAILED                   (-184)
#define NSORT_UNIMPLEMENTED                 (-185)
#define NSORT_UNLOCK_FAILED                 (-186)
#define NSORT_COMPARE_UNDECLARED            (-187) /* libxsort: compare=NAME not declared */
#define NSORT_FOLD_POINTER                  (-188)
#define NSORT_THREAD_CREATE                 (-189)
#define NSORT_PWRITE64_ERROR                (-190)
#define NSORT_BAD_MERGE_INPUT               (-191)
#define NSORT_BAD_MERGE_WIDTH               (-192) /* libxsort: merge_width does not count the inputs */
#define NSORT_API_DEFINE_MERGE              (-193)
#define NSORT_API_MERGE_INPUT               (-194)

/* -195 .. -217: numbers, strings, bit fields and packed decimals in statements;
 * callbacks that fail; the statistics file. */
#define NSORT_UNKNOWN_SCALE                 (-195)
#define NSORT_NUMBER_OVERFLOW               (-196)
#define NSORT_NEEDS_STRING                  (-197)
#define NSORT_EXTRA_DOES                    (-198)
#define NSORT_EXTRA_NOT                     (-199)
#define NSORT_NOT_UNSUPPORTED               (-200)
#define NSORT_IN_REC_SIZE_REQUIRED          (-201)
#define NSORT_BAD_BIT_FIELD                 (-202)
#define NSORT_BIT_POSITION_TOO_LARGE        (-203)
#define NSORT_BIT_SIZE_TOO_LARGE            (-204)
#define NSORT_REFORMAT_NEEDS_MAXSIZE        (-205)
#define NSORT_VALUE_CONTAINS_SPECIAL        (-206)
#define NSORT_PARTIAL_VARIABLE_RECORD       (-207)
#define NSORT_EXTRA_FORMAT                  (-208)
#define NSORT_SIZE_BEYOND_LICENSE           (-209)
#define NSORT_PACKED_SIZE_TOO_LARGE         (-210)
#define NSORT_PACKED_OVERFLOW               (-211)
#define NSORT_MERGE_CALLBACK_OVERWRITE      (-212)
#define NSORT_USER_RAISED_ERROR             (-213) /* libxsort: a comparison function raised one */
#define NSORT_STATFILE_STAT                 (-214)
#define NSORT_STATFILE_BAD_TYPE             (-215)
#define NSORT_STATFILE_OPEN                 (-216)
#define NSORT_KEY_DIFF_CONFLICT             (-217)

/* ---- Warnings: positive; the sort goes on. Nsort leaves 17 unused. ---- */

#define NSORT_END_OF_OUTPUT                 1      /* libxsort: no more records */
#define NSORT_CLOSE_FAILED                  2
#define NSORT_UNLINK_FAILED                 3
#define NSORT_MEMORY_MINIMAL                4
#define NSORT_EXCESSIVE_PAGING              5
#define NSORT_REDUCING_IOSIZE               6
#define NSORT_PMTRACE_PROBLEM               7
#define NSORT_SUMMARIZE_OVERFLOWED          8
#define NSORT_CPU_SUBSET_LIMIT              9
#define NSORT_CPU_REQ_TOOBIG                10
#define NSORT_CPU_REQ_RESTRICTED            11
#define NSORT_RECSORT_OUTFILES              12
#define NSORT_POINTER_SORT_ONLY             13
#define NSORT_TEMPFS_INAPPROPRIATE          14
#define NSORT_CONVERSIONS_OVERFLOWED        15
#define NSORT_MEMORY_REDUCED                16
#define NSORT_MLDLINK                       18
#define NSORT_RUNANYWHERE                   19
#define NSORT_UNDEFINED_KEY                 20
#define NSORT_KEY_TOO_SHORT                 21
#define NSORT_DETAIL_IO                     22
#define NSORT_RETURN_BUF_SMALL              23     /* libxsort: next record exceeds the buffer */
#define NSORT_IGNORING_KEY                  24
#define NSORT_DELIMITER_ADDED               25
#define NSORT_PREALLOCATE                   26
#define NSORT_NO_CLIENT_INPUT               27     /* libxsort: release to an -in_file sort */
#define NSORT_NO_CLIENT_OUTPUT              28     /* libxsort: return from an -out_file sort */

#endif /* NSORTERRNO_H */
