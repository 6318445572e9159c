//! Unit tests of the Nsort statement parser: the published command line, every alias and prefix
//! form, and each error message.

use super::*;

fn ok(text: &str) -> NsortSpec {
    match parse_spec(text) {
        Ok(s) => s,
        Err(e) => panic!("{text:?} failed: {e}"),
    }
}

fn err(text: &str) -> String {
    match parse_spec(text) {
        Ok(s) => panic!("{text:?} should fail, gave {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn file(path: &str) -> FileSpec {
    FileSpec { path: PathBuf::from(path), direct: None, transfer_size: None, count: None, preallocate: false, sync: false, append: false }
}

const PUBLISHED: &str = "
    -processes=16 -memory=124000M -method=radix -touch -format=size:100
    -field=name:key,size:10,off:0,character -key=key -statistics
    -in_file=/data/in,direct,transfer_size=16M,count=64
    -out_file=/data/out,direct,transfer_size=64M,count=64,preallocate
    -temp=/scratch/tmp,direct,transfer_size=64M,count=32,preallocate
";

#[test]
fn published_command_line() {
    let io = |path: &str, mib: u64, count: usize, preallocate: bool| FileSpec {
        direct: Some(true),
        transfer_size: Some(mib << 20),
        count: Some(count),
        preallocate,
        ..file(path)
    };
    let want = NsortSpec {
        processes: Some(16),
        memory: Some(MemorySize::Bytes(124000 << 20)),
        method: Some(Method::Radix),
        touch: Some(true),
        statistics: Some(true),
        nowarn: false,
        record_size: Some(100),
        record_delimiter: None,
        maximum_record_size: None,
        fields: vec![FieldDef {
            name: "key".into(),
            offset: 0,
            size: 10,
            field_type: FieldType::Character,
            endian: None,
            delimiter: None,
            compare: None,
        }],
        keys: vec![KeyDef {
            field: Some("key".into()),
            offset: 0,
            size: 10,
            field_type: FieldType::Character,
            endian: None,
            descending: false,
            compare: None,
        }],
        in_files: vec![io("/data/in", 16, 64, false)],
        out_file: Some(io("/data/out", 64, 64, true)),
        out_copies: Vec::new(),
        match_mark: None,
        temp_dirs: vec![io("/scratch/tmp", 64, 32, true)],
        duplicates: None,
        summarize: Vec::new(),
        selection: None,
        separator: None,
        reformat: None,
        input_record_size: None,
        merge: false,
        derivation: None,
    };
    assert_eq!(ok(PUBLISHED), want);
}

#[test]
fn empty_spec_is_default() {
    assert_eq!(ok(""), NsortSpec::default());
    assert_eq!(ok("  \n # only a comment\n\t"), NsortSpec::default());
}

#[test]
fn colon_or_equals_after_keyword() {
    assert_eq!(ok("-memory:1G").memory, Some(MemorySize::Bytes(1 << 30)));
    assert_eq!(ok("-memory=1G").memory, Some(MemorySize::Bytes(1 << 30)));
    assert_eq!(ok("-processes:4").processes, Some(4));
    assert_eq!(ok("-format=record_size=100").record_size, Some(100));
    let s = ok("-in_file:/a,transfer_size:1M,count=2");
    assert_eq!(s.in_files[0].transfer_size, Some(1 << 20));
    assert_eq!(s.in_files[0].count, Some(2));
}

#[test]
fn keyword_prefixes_aliases_and_case() {
    let s = ok("-mem=2G -stat -proc=3 -meth=merge -tou -form=siz:8 -in=/a -ou=/b -te=/t");
    assert_eq!(s.memory, Some(MemorySize::Bytes(2 << 30)));
    assert_eq!(s.statistics, Some(true));
    assert_eq!(s.processes, Some(3));
    assert_eq!(s.method, Some(Method::Merge));
    assert_eq!(s.touch, Some(true));
    assert_eq!(s.record_size, Some(8));
    assert_eq!(s.in_files, vec![file("/a")]);
    assert_eq!(s.out_file, Some(file("/b")));
    assert_eq!(s.temp_dirs, vec![file("/t")]);
    let s = ok("-MEMORY=1G -Statistics -NoTouch -NOSTAT -Method=RADIX -K=Key -Field=name:Key,SIZE:2");
    assert_eq!(s.memory, Some(MemorySize::Bytes(1 << 30)));
    assert_eq!(s.statistics, Some(false));
    assert_eq!(s.touch, Some(false));
    assert_eq!(s.method, Some(Method::Radix));
    assert_eq!(s.keys[0].field.as_deref(), Some("Key"));
    for kw in ["temp", "temp_file", "tempdir", "temp_dir", "temp_f", "TEMP_DIR"] {
        assert_eq!(ok(&format!("-{kw}=/x")).temp_dirs, vec![file("/x")], "{kw}");
    }
    assert!(err("-m=r").starts_with("ambiguous statement '-m=r'"));
    assert_eq!(ok("-meth=r").method, Some(Method::Radix));
}

#[test]
fn later_statements_override() {
    let s = ok("-touch -notouch -nostat -stat -processes=2 -processes=8 \
        -memory=50% -format=size:4 -format=size:9");
    assert_eq!(s.touch, Some(false));
    assert_eq!(s.statistics, Some(true));
    assert_eq!(s.processes, Some(8));
    assert_eq!(s.memory, Some(MemorySize::PercentOfRam(50.0)));
    assert_eq!(s.record_size, Some(9));
}

#[test]
fn bare_memory_number_is_mib() {
    assert_eq!(ok("-memory=4000").memory, Some(MemorySize::Bytes(4000 << 20)));
    assert_eq!(ok("-memory=1.5G").memory, Some(MemorySize::Bytes(3 << 29)));
}

#[test]
fn comments_and_newlines() {
    let s = ok("# a spec\n-processes=2   # threads\n\n-memory=1G\n#-touch\n");
    assert_eq!(s.processes, Some(2));
    assert_eq!(s.memory, Some(MemorySize::Bytes(1 << 30)));
    assert_eq!(s.touch, None);
    // '#' inside a word is not a comment, so the size is bad.
    let s = ok("-in_file=/data/run#1 # the input\r\n-stat");
    assert_eq!(s.in_files, vec![file("/data/run#1")]);
    assert_eq!(s.statistics, Some(true));
    assert!(err("-memory=1G#x").contains("unknown unit 'G#x'"));
}

#[test]
fn several_temp_and_in_files() {
    let s = ok("-temp=/t1,count=2 -temp_dir=/t2 -tempdir=/t3,buffered -in_file=/a -in_file=/b");
    let paths: Vec<_> = s.temp_dirs.iter().map(|f| f.path.to_str().unwrap_or("")).collect();
    assert_eq!(paths, ["/t1", "/t2", "/t3"]);
    assert_eq!(s.temp_dirs[0].count, Some(2));
    assert_eq!(s.temp_dirs[2].direct, Some(false));
    assert_eq!(s.in_files, vec![file("/a"), file("/b")]);
}

#[test]
fn file_option_words_and_prefixes() {
    let s = ok("-out_file=/o,dir,trans=8K,cou=3,prealloc,sy");
    let want = FileSpec { direct: Some(true), transfer_size: Some(8192), count: Some(3), preallocate: true, sync: true, ..file("/o") };
    assert_eq!(s.out_file, Some(want));
    // Each -out_file after the first is another output file, with its own options.
    let s = ok("-out_file=/o -out_file=/c1,append -out_file=/c2,sync");
    assert_eq!(s.out_file, Some(file("/o")));
    assert_eq!(s.out_copies, vec![FileSpec { append: true, ..file("/c1") }, FileSpec { sync: true, ..file("/c2") }]);
    assert_eq!(ok("-temp=/t,nodirect").temp_dirs[0].direct, Some(false));
    assert_eq!(ok("-temp=/t,BUFFERED,buf").temp_dirs[0].direct, Some(false));
    assert_eq!(ok("-temp=/t,transfer_size=4096").temp_dirs[0].transfer_size, Some(4096));
    // Paths keep '=' and ':' and their case.
    assert_eq!(ok("-in_file=/a=b:C").in_files, vec![file("/a=b:C")]);
}

#[test]
fn field_option_words_and_defaults() {
    let s = ok("-format=size:32 \
        -field=name:a,siz:4,offset:2 -field=name:b,size:3,pos:7,char \
        -field=name:c,int,big -field=name:d,unsigned,size:2,little_endian \
        -field=name:e,float -field=name:f,double,off:24 -field=name:g,dec,size:1,o:31");
    let f = |name: &str, offset, size, field_type, endian| FieldDef {
        name: name.into(),
        offset,
        size,
        field_type,
        endian,
        delimiter: None,
        compare: None,
    };
    use FieldType::*;
    assert_eq!(
        s.fields,
        vec![
            f("a", 2, 4, Character, None),
            f("b", 6, 3, Character, None),
            f("c", 9, 4, Integer, Some(Endian::Big)),
            f("d", 13, 2, Unsigned, Some(Endian::Little)),
            f("e", 15, 4, Float, None),
            f("f", 24, 8, Double, None),
            f("g", 31, 1, Decimal, None),
        ]
    );
    for (size, ok_) in [(1, true), (2, true), (3, false), (4, true), (8, true), (16, false)] {
        assert_eq!(parse_spec(&format!("-field=name:x,integer,size:{size}")).is_ok(), ok_, "{size}");
    }
    // A repeated option with the same value is harmless.
    assert_eq!(ok("-field=name:x,size:2,size:2").fields[0].size, 2);
}

#[test]
fn keys_in_priority_order() {
    let s = ok("-key=b,descending -key=position:1,size:2 -key=a,asc \
        -key=pos:5,int,size:8,little,desc -key=a,d \
        -field=name:a,size:2,off:10 -field=name:b,double,big_endian,off:12");
    let k = |field: Option<&str>, offset, size, field_type, endian, descending| KeyDef {
        field: field.map(String::from),
        offset,
        size,
        field_type,
        endian,
        descending,
        compare: None,
    };
    use FieldType::*;
    assert_eq!(
        s.keys,
        vec![
            k(Some("b"), 12, 8, Double, Some(Endian::Big), true),
            k(None, 0, 2, Character, None, false),
            k(Some("a"), 10, 2, Character, None, false),
            k(None, 4, 8, Integer, Some(Endian::Little), true),
            k(Some("a"), 10, 2, Character, None, true),
        ]
    );
    assert!(ok("-field=name:a,size:1 -key=name:a,DESC").keys[0].descending);
    // A bare first word followed by options with values is an option.
    let s = ok("-key=descending,position:4,size:1");
    assert_eq!(s.keys, vec![k(None, 3, 1, Character, None, true)]);
    assert_eq!(ok("-key=offset=5,unsigned").keys, vec![k(None, 5, 4, Unsigned, None, false)]);
}

#[test]
fn threads_and_nowarn_as_nsort_clients_write_them() {
    let s = ok("-threads=3 -nowarn -format=size:10");
    assert_eq!((s.processes, s.nowarn), (Some(3), true));
    assert!(!ok("-format=size:10").nowarn);
}

#[test]
fn position_counts_from_one_and_offset_from_zero() {
    assert_eq!(ok("-key=position:1,size:10").keys, ok("-key=offset:0,size:10").keys);
    assert_eq!(ok("-key=pos:8,size:2").keys, ok("-key=off:7,size:2").keys);
    assert_eq!(ok("-field=name:a,position:5,size:2 -key=a").fields[0].offset, 4);
    assert_eq!(
        err("-key=position:0,size:2"),
        "invalid statement '-key=position:0,size:2': position:N counts bytes from 1, but N was zero \
         (offset:N counts from 0)"
    );
}

#[test]
fn extents_fit_the_record_whatever_the_order() {
    assert!(parse_spec("-field=name:k,size:10,off:90 -key=k -format=size:100").is_ok());
    assert!(parse_spec("-key=position:100,size:1 -format=size:100").is_ok());
}

/// Each error quotes the statement; the full text is checked.
#[test]
fn statement_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "memory=1G",
            "'memory=1G' is not an Nsort statement: statements start with a single '-', \
             as in -memory=1G",
        ),
        (
            "--memory=1G",
            "'--memory=1G' is not an Nsort statement: statements start with a single '-', \
             as in -memory=1G",
        ),
        (
            "-colour=red",
            "unknown statement '-colour=red': expected one of -processes, -memory, -method, \
             -touch, -notouch, -statistics, -nostatistics, -nowarn, -format, -field, -key, -in_file, \
             -out_file, -temp_file, -duplicates, -noduplicates, -summarize, -specification, -condition, -include, -omit, -reformat, -merge, -derived, -match",
        ),
        ("-me=1G", "ambiguous statement '-me=1G': '-me' could be -memory, -method or -merge"),
        ("-t", "ambiguous statement '-t': '-t' could be -threads, -touch or -temp_file"),
        ("-no", "ambiguous statement '-no': '-no' could be -notouch, -nostatistics, -nowarn or -noduplicates"),
        ("-f=x", "ambiguous statement '-f=x': '-f' could be -format or -field"),
        ("-processes=0", "invalid statement '-processes=0': processes must be at least 1"),
        ("-proc=many", "invalid statement '-proc=many': processes must be a whole number, not 'many'"),
        ("-processes", "invalid statement '-processes': -processes needs a value, as in -processes=16"),
        ("-memory=", "invalid statement '-memory=': -memory needs a value, as in -memory=4G"),
        (
            "-memory=lots",
            "invalid statement '-memory=lots': invalid size 'lots': expected a number with an \
             optional unit (b, K, M, G, T, P, E), as in 512M or 1.5G",
        ),
        ("-memory=0", "invalid statement '-memory=0': invalid size '0': must be at least one byte"),
        (
            "-memory=150%",
            "invalid statement '-memory=150%': invalid size '150%': a percentage of RAM \
             must be more than 0 and at most 100",
        ),
        ("-touch=yes", "invalid statement '-touch=yes': -touch takes no value"),
        ("-nostat:1", "invalid statement '-nostat:1': -nostatistics takes no value"),
        (
            "-method=quick",
            "invalid statement '-method=quick': unknown method 'quick'; expected one of \
             radix, merge",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text:?}");
    }
}

#[test]
fn format_errors() {
    let cases: &[(&str, &str)] = &[
        ("-format=size:0", "invalid statement '-format=size:0': the record size must be at least 1"),
        ("-format=size", "invalid statement '-format=size': 'size' needs a value, as in size:N"),
        ("-format=size:", "invalid statement '-format=size:': 'size' needs a value after ':'"),
        (
            "-format=lines",
            "invalid statement '-format=lines': unknown format option 'lines'; expected one \
             of size, delimiter, maximum_size, separator",
        ),
        (
            "-format=size:10,record_size:12",
            "invalid statement '-format=size:10,record_size:12': the record size is given \
             twice, with different values",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text:?}");
    }
}

#[test]
fn field_errors() {
    let cases: &[(&str, &str)] = &[
        ("-field=size:4", "invalid statement '-field=size:4': -field needs a name, as in name:key"),
        ("-field=name:a,size:1 -field=name:a,size:2", "invalid statement '-field=name:a,size:2': a field named 'a' is already defined"),
        (
            "-format=size:100 -field=name:k,size:10,off:95",
            "invalid statement '-field=name:k,size:10,off:95': the field covers bytes 95..105, \
             past the end of the 100-byte record (-format=size:100)",
        ),
        (
            "-field=name:k,off:0",
            "invalid statement '-field=name:k,off:0': a character field or key needs a size, \
             as in size:10",
        ),
        (
            "-field=name:k,integer,size:3",
            "invalid statement '-field=name:k,integer,size:3': integer values are 1, 2, 4 \
             or 8 bytes, not 3",
        ),
        (
            "-field=name:k,float,size:8",
            "invalid statement '-field=name:k,float,size:8': float values are 4 bytes, \
             not 8",
        ),
        (
            "-field=name:k,size:4,big_endian",
            "invalid statement '-field=name:k,size:4,big_endian': a byte order applies only \
             to binary numbers (integer, unsigned, float, double), not character",
        ),
        ("-field=name:k,size:0", "invalid statement '-field=name:k,size:0': the size must be at least 1"),
        (
            "-field=name:k,size:4,off:-1",
            "invalid statement '-field=name:k,size:4,off:-1': the offset must be a whole \
             number, not '-1'",
        ),
        (
            "-field=name:k,size:4,descending",
            "invalid statement '-field=name:k,size:4,descending': unknown field option \
             'descending'; expected one of name, offset, position, size, character, integer, unsigned, \
             float, double, decimal, packed, zoned, month, big_endian, little_endian, delimiter, maximum_size, compare",
        ),
        (
            "-field=name:k,d",
            "invalid statement '-field=name:k,d': field option 'd' is ambiguous; it could be \
             double, decimal or delimiter",
        ),
        (
            "-field=name:k,size:4,int,char",
            "invalid statement '-field=name:k,size:4,int,char': the type is given twice, \
             with different values",
        ),
        ("-field=name:k,character:1", "invalid statement '-field=name:k,character:1': 'character' takes no value"),
        (
            "-field=name:k,,size:1",
            "invalid statement '-field=name:k,,size:1': empty option (two commas in a row, \
             or a comma at an end)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text:?}");
    }
}

#[test]
fn key_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "-key=nokey",
            "invalid statement '-key=nokey': no -field is named 'nokey' (no fields are \
             defined; field names are case-sensitive)",
        ),
        (
            "-field=name:a,size:1 -field=name:b,size:1 -key=A",
            "invalid statement '-key=A': no -field is named 'A'; the fields are a, b \
             (names are case-sensitive)",
        ),
        (
            "-field=name:a,size:1 -key=name:a,size:1",
            "invalid statement '-key=name:a,size:1': a key that names a field takes its \
             position, size and type from the field; give either a field name or position \
             and size",
        ),
        (
            "-key=size:4",
            "invalid statement '-key=size:4': -key needs a field name or a position, as in \
             -key=position:1,size:10",
        ),
        (
            "-key=position:1",
            "invalid statement '-key=position:1': a character field or key needs a size, \
             as in size:10",
        ),
        (
            "-format=size:100 -key=position:96,size:10",
            "invalid statement '-key=position:96,size:10': the key covers bytes 95..105, \
             past the end of the 100-byte record (-format=size:100)",
        ),
        (
            "-key=pos:1,size:4,d",
            "invalid statement '-key=pos:1,size:4,d': key option 'd' is ambiguous; it could \
             be double, decimal or descending",
        ),
        (
            "-field=name:a,size:1 -key=a,int",
            "invalid statement '-key=a,int': unknown key option 'int'; expected one of \
             ascending, descending",
        ),
        (
            "-key=k,asc,desc",
            "invalid statement '-key=k,asc,desc': the direction is given twice, with \
             different values",
        ),
        (
            "-key",
            "invalid statement '-key': -key needs a value, as in -key=key or \
             -key=position:1,size:10",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text:?}");
    }
}

#[test]
fn file_errors() {
    let cases: &[(&str, &str)] = &[
        ("-in_file=/a,count=0", "invalid statement '-in_file=/a,count=0': count must be at least 1"),
        ("-in_file=/a,count", "invalid statement '-in_file=/a,count': 'count' needs a value, as in count:N"),
        (
            "-temp=/t,transfer_size=1000",
            "invalid statement '-temp=/t,transfer_size=1000': transfer_size must be at least \
             4 KiB and a multiple of 4 KiB (4096 bytes) to keep direct I/O aligned, not 1000 \
             (1000 B)",
        ),
        (
            "-temp=/t,transfer_size=6K",
            "invalid statement '-temp=/t,transfer_size=6K': transfer_size must be at least \
             4 KiB and a multiple of 4 KiB (4096 bytes) to keep direct I/O aligned, not 6K \
             (6 KiB)",
        ),
        (
            "-temp=/t,transfer_size=50%",
            "invalid statement '-temp=/t,transfer_size=50%': invalid size '50%': a \
             percentage is not allowed here; give a size such as 16M",
        ),
        (
            "-in_file=/a,fast",
            "invalid statement '-in_file=/a,fast': unknown file option 'fast'; expected one \
             of direct, buffered, transfer_size, count, preallocate, sync, append",
        ),
        (
            "-in_file=/a,preallocate",
            "invalid statement '-in_file=/a,preallocate': 'preallocate' applies only to \
             -out_file and -temp_file",
        ),
        ("-in=/a,sync", "invalid statement '-in=/a,sync': 'sync' applies only to -out_file and -temp_file"),
        (
            "-out_file=/o,direct,buffered",
            "invalid statement '-out_file=/o,direct,buffered': direct or buffered is given \
             twice, with different values",
        ),
        ("-out_file=,direct", "invalid statement '-out_file=,direct': -out_file needs a path before the options"),
        ("-temp_dir", "invalid statement '-temp_dir': -temp_file needs a value, as in -temp_file=/path"),
        (
            "-in_file=/a,",
            "invalid statement '-in_file=/a,': empty option (two commas in a row, or a comma \
             at an end)",
        ),
        ("-out_file=/o1 -out_file=/o2 -out_file=/o1,append", "invalid statement '-out_file=/o1,append': '/o1' is already an output file"),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text:?}");
    }
}

#[test]
fn numbers_too_large() {
    assert_eq!(
        err("-processes=99999999999999999999999"),
        "invalid statement '-processes=99999999999999999999999': processes \
         '99999999999999999999999' is too large"
    );
    assert_eq!(
        err("-field=name:a,size:1,off:18446744073709551615 -field=name:b,size:1"),
        "invalid statement '-field=name:b,size:1': the previous field ends past the \
         largest possible offset"
    );
    assert_eq!(
        err("-key=position:18446744073709551615,size:2"),
        "invalid statement '-key=position:18446744073709551615,size:2': the key ends past \
         the largest possible record"
    );
}

#[test]
fn first_error_wins_and_variants_are_matchable() {
    let e = parse_spec("-stat -bogus -memory=x").expect_err("bogus");
    assert!(matches!(e, SpecError::UnknownStatement { ref statement, .. } if statement == "-bogus"));
    let e = parse_spec("-memory=x").expect_err("size");
    assert!(matches!(e, SpecError::Size { error: SizeError::NotANumber(_), .. }));
}

#[test]
fn duplicates_and_summarize() {
    let s = parse_spec("-format=size:8 -field=name:k,size:2 -field=name:n,size:4,unsigned -key=k -nodup -summ=n").unwrap();
    assert_eq!(s.duplicates, Some(false));
    assert_eq!(s.summarize.iter().map(|f| (f.name.as_str(), f.offset, f.size)).collect::<Vec<_>>(), [("n", 2, 4)]);
    let e = parse_spec("-format=size:8 -field=name:k,size:2 -key=k -summarize=k").unwrap_err().to_string();
    assert!(e.contains("-summarize=k") && e.contains("integer"), "{e}");
    assert!(parse_spec("-noduplicates=yes").is_err());
}

// ---------------------------------------------------------------------
// Delimited (variable-length) records

#[test]
fn delimited_format_and_fields() {
    let s = ok("-format=delimiter:'\\n' -field=name:city,delimiter:',' \
        -field=name:pop,delim=',',decimal -field=name:rest,delimiter:'\\n' -key=pop,descending -key=city -nodup");
    assert_eq!(s.record_delimiter, Some(b'\n'));
    assert_eq!(s.record_size, None);
    let f = |name: &str, field_type, delimiter| FieldDef {
        name: name.into(),
        offset: 0,
        size: 0,
        field_type,
        endian: None,
        delimiter: Some(delimiter),
        compare: None,
    };
    assert_eq!(
        s.fields,
        vec![f("city", FieldType::Character, b','), f("pop", FieldType::Decimal, b','), f("rest", FieldType::Character, b'\n'),]
    );
    assert_eq!(s.keys.len(), 2);
    assert_eq!(s.keys[0].field.as_deref(), Some("pop"));
    assert!(s.keys[0].descending);
    assert_eq!(s.keys[0].field_type, FieldType::Decimal);
    assert_eq!(s.keys[1].field.as_deref(), Some("city"));
    assert_eq!(s.duplicates, Some(false));
}

#[test]
fn delimited_format_spellings() {
    for (text, want) in [
        ("-format=delimiter:'\\n'", b'\n'),
        ("-format:delimiter=\\n", b'\n'),
        ("-form=record_delimiter:newline", b'\n'),
        ("-format=DELIM:NewLine", b'\n'),
        ("-format=d:'\\0'", 0),
        ("-format=delimiter:nul", 0),
        ("-format=delimiter:'|'", b'|'),
        ("-format=delimiter:;", b';'),
        ("-format=delimiter:'\\x1e'", 0x1e),
        ("-format=delimiter:'\\036'", 0o36),
        ("-format=delimiter:'\\r',maximum_size:4096", b'\r'),
    ] {
        assert_eq!(ok(text).record_delimiter, Some(want), "for {text:?}");
    }
    assert_eq!(ok("-format=delimiter:tab,max:80").maximum_record_size, Some(80));
    // A later -format overrides an earlier one, whichever kind.
    let s = ok("-format=size:100 -format=delimiter:'\\n'");
    assert_eq!((s.record_size, s.record_delimiter), (None, Some(b'\n')));
    let s = ok("-format=delimiter:'\\n' -format=size:100");
    assert_eq!((s.record_size, s.record_delimiter), (Some(100), None));
}

#[test]
fn delimiter_characters() {
    let d = |text: &str| {
        let s = ok(&format!("-format=delimiter:'\\n' -field=name:a,delimiter:{text}"));
        s.fields[0].delimiter.unwrap()
    };
    for (text, want) in [
        ("','", b','),
        ("comma", b','),
        ("tab", b'\t'),
        ("TAB", b'\t'),
        ("'\\t'", b'\t'),
        ("\\t", b'\t'),
        ("space", b' '),
        ("'\\x20'", b' '),
        ("'\\040'", b' '),
        ("':'", b':'),
        (":", b':'),
        ("'='", b'='),
        ("'\\''", b'\''),
        ("'\\\\'", b'\\'),
        ("|", b'|'),
        ("'\\n'", b'\n'),
    ] {
        assert_eq!(d(text), want, "for {text:?}");
    }
    // A quoted comma stays one option; a name with an apostrophe is taken as written.
    let s = ok("-format=delimiter:'\\n' -field=name:O'Brien,delimiter:',',decimal -key=O'Brien");
    assert_eq!(s.fields[0].name, "O'Brien");
    assert_eq!(s.fields[0].field_type, FieldType::Decimal);
    for b in 0..=255u8 {
        let shown = delimited::display_char(b);
        assert_eq!(delimited::parse_char(&shown), Ok(b), "{shown}");
    }
}

#[test]
fn delimited_records_with_fixed_positions() {
    let s = ok("-format=delimiter:'\\n' -field=name:k,size:4,off:2 -key=k -key=position:1,size:2,decimal,desc");
    assert_eq!(s.fields[0].delimiter, None);
    assert_eq!((s.keys[0].offset, s.keys[0].size), (2, 4));
    assert_eq!((s.keys[1].offset, s.keys[1].size, s.keys[1].descending), (0, 2, true));
}

#[test]
fn delimited_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "-format=delimiter:newline -touch",
            "invalid statement '-touch': -touch pre-faults the buffer of fixed-size records; \
             delimited records have none to touch",
        ),
        (
            "-format=delimiter:newline -in_file=in,transfer_size=1m",
            "invalid statement '-in_file=in': -in_file's direct, transfer_size and count apply \
             to fixed-size records; delimited records are read through the page cache",
        ),
        (
            "-format=delimiter:'\\n',size:100",
            "invalid statement '-format=delimiter:'\\n',size:100': a record has a fixed size or \
             ends at a delimiter, not both",
        ),
        (
            "-format=size:100,maximum_size:200",
            "invalid statement '-format=size:100,maximum_size:200': maximum_size applies to \
             delimited records; fixed-size records have size:N",
        ),
        ("-format=record_size:0", "invalid statement '-format=record_size:0': the record size must be at least 1"),
        (
            "-format=delimiter:ab",
            "invalid statement '-format=delimiter:ab': 'ab' is not a delimiter: write one \
             character (',' or |), a C escape ('\\n', '\\t', '\\x1f', '\\037') or a name \
             (newline, tab, space, comma, nul)",
        ),
        (
            "-format=delimiter:'\\q'",
            "invalid statement '-format=delimiter:'\\q'': ''\\q'' is not a delimiter: write one \
             character (',' or |), a C escape ('\\n', '\\t', '\\x1f', '\\037') or a name \
             (newline, tab, space, comma, nul)",
        ),
        (
            "-format=delimiter:'\\400'",
            "invalid statement '-format=delimiter:'\\400'': ''\\400'' is not a delimiter: write \
             one character (',' or |), a C escape ('\\n', '\\t', '\\x1f', '\\037') or a name \
             (newline, tab, space, comma, nul)",
        ),
        (
            "-format=delimiter:''",
            "invalid statement '-format=delimiter:''': an empty quote is not a delimiter: write \
             one character",
        ),
        (
            "-format=delimiter:'",
            "invalid statement '-format=delimiter:'': ''' opens a quote that does not close \
             (whitespace ends a statement: write a space as space or '\\x20')",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',',size:4",
            "invalid statement '-field=name:a,delimiter:',',size:4': a field ends after its size \
             or at its delimiter, not both",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',',off:3",
            "invalid statement '-field=name:a,delimiter:',',off:3': a delimited field starts \
             where the previous field ends, so it takes no offset",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',',integer",
            "invalid statement '-field=name:a,delimiter:',',integer': a delimited field is text: \
             character, decimal or month, not integer",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',',big_endian",
            "invalid statement '-field=name:a,delimiter:',',big_endian': a delimited field is \
             text: character, decimal or month, not a byte order",
        ),
        (
            "-field=name:a,delimiter:','",
            "invalid statement '-field=name:a,delimiter:','': field 'a' ends at a delimiter, so \
             the records must be delimited too: give -format=delimiter:'\\n' (or the records' \
             delimiter)",
        ),
        (
            "-format=size:10 -field=name:a,delimiter:','",
            "invalid statement '-field=name:a,delimiter:','': field 'a' ends at a delimiter, so \
             the records must be delimited too: give -format=delimiter:'\\n' (or the records' \
             delimiter)",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',' -field=name:b,delimiter:';'",
            "invalid statement '-field=name:b,delimiter:';'': field 'b' ends at ';' but \
             '-field=name:a,delimiter:','' ends at ','; xsort sorts delimited records with GNU \
             sort's fields, which have one separator, so every delimited field (but a last one \
             ending at the record delimiter) must use the same delimiter",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:newline -field=name:b,delimiter:','",
            "invalid statement '-field=name:a,delimiter:newline': field 'a' ends at the record \
             delimiter '\\n', so it runs to the end of the record and must be the last -field",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',' -field=name:b,size:4",
            "invalid statement '-field=name:b,size:4': field 'b' has a fixed position but field \
             'a' ('-field=name:a,delimiter:','') ends at a delimiter; xsort sorts delimited \
             records as text lines with GNU sort's fields, so the fields of a record must all \
             be delimited or all at fixed positions",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',' -key=position:1,size:2",
            "invalid statement '-key=position:1,size:2': a key at a byte position cannot be \
             combined with delimited fields: name a -field, as in -key=NAME",
        ),
        (
            "-format=delimiter:'\\n' -field=name:n,size:4,integer",
            "invalid statement '-field=name:n,size:4,integer': delimited records are sorted as \
             text, so their fields and keys are character, decimal or month, not integer",
        ),
        (
            "-format=delimiter:'\\n' -key=position:1,double",
            "invalid statement '-key=position:1,double': delimited records are sorted as text, \
             so their fields and keys are character, decimal or month, not double",
        ),
        (
            "-format=delimiter:'\\n' -key=position:1,size:2,delimiter:','",
            "invalid statement '-key=position:1,size:2,delimiter:','': unknown key option \
             'delimiter'; expected one of name, offset, position, size, character, integer, unsigned, \
             float, double, decimal, packed, zoned, month, big_endian, little_endian, ascending, descending, compare",
        ),
        (
            "-format=delimiter:'\\n' -field=name:c,delimiter:',' -summarize=c",
            "invalid statement '-summarize=c': -summarize sums binary integer fields of \
             fixed-size records (-format=size:N), not of delimited ones",
        ),
        (
            "-format=delimiter:'\\n' -field=name:a,delimiter:',',delimiter:';'",
            "invalid statement '-field=name:a,delimiter:',',delimiter:';'': the delimiter is \
             given twice, with different values",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text:?}");
    }
}

/// Every place that quotes what the user wrote quotes a bounded excerpt: a 1 MB statement (or
/// word, size, name, path) must not come back whole in a one-line message.
#[test]
fn long_text_is_quoted_by_an_excerpt() {
    let long = "x".repeat(1 << 20);
    let cases = [
        format!("-{long}"),
        long.clone(),
        format!("-format=size:100 -field=name:k,size:4,{long}"),
        format!("-memory={long}"),
        format!("-memory=1{long}"),
        format!("-format=delimiter:{long}"),
        format!("-format=size:{long}"),
        format!("-format=size:10 -key={long}"),
        format!("-format=size:10 -field=name:{long},size:1 -field=name:{long},size:1"),
        format!("-format=size:10 -field=name:{long},size:1 -key=k"),
        format!("-specification=/nonexistent/{long}"),
        format!("-in_file=/a,transfer_size={long}"),
        format!("-out_file=/{long} -out_file=/{long}"),
    ];
    for text in &cases {
        let message = err(text);
        assert!(message.len() < 600, "{} bytes: {}", message.len(), excerpt(&message));
        assert!(message.contains("... ("), "no excerpt in {message}");
    }
    let message = err(&format!("-{long}"));
    let head = format!("-{}", "x".repeat(EXCERPT_CHARS - 1));
    assert!(
        message.starts_with(&format!("unknown statement '{head}... ({} bytes in all)': expected one of -processes", (1 << 20) + 1)),
        "{message}"
    );
    // Text up to the limit is quoted whole, as before.
    let whole = format!("-{}", "y".repeat(QUOTE_WHOLE_CHARS - 1));
    assert!(err(&whole).starts_with(&format!("unknown statement '{whole}': ")));
}

/// Statements given as bytes (the C library's): paths may be any bytes, other statements must be
/// text, and paths given as `&str` keep every character.
#[test]
fn byte_paths() {
    use std::os::unix::ffi::OsStrExt;

    let given = b"-format=size:10 -temp=/t\xff,sync -in_file=/i\xfe -in_file=/j -out_file=/o\xfd\xf4\x8f\xbf\xbf";
    let spec = bytes::with_byte_paths(given, parse_spec).unwrap();
    let paths = |files: &[FileSpec]| files.iter().map(|f| f.path.as_os_str().as_bytes().to_vec()).collect::<Vec<_>>();
    assert_eq!(paths(&spec.temp_dirs), [b"/t\xff".to_vec()]);
    assert!(spec.temp_dirs[0].sync);
    assert_eq!(paths(&spec.in_files), [b"/i\xfe".to_vec(), b"/j".to_vec()]);
    assert_eq!(spec.out_file.unwrap().path.as_os_str().as_bytes(), b"/o\xfd\xf4\x8f\xbf\xbf");

    // Elsewhere the bytes must be text; the message shows the bytes that are not.
    let refused = bytes::with_byte_paths(b"-format=size:10 -field=name:k\xff,size:2", parse_spec).unwrap_err();
    assert_eq!(
        bytes::show_bytes(&refused.to_string()),
        "invalid statement '-field=name:k\\xff,size:2': -field is not UTF-8 text; only the paths of \
         -in_file, -out_file, -temp_file and -specification may hold other bytes"
    );
    let unknown = bytes::with_byte_paths(b"-in_file=/a,\xffast", parse_spec).unwrap_err();
    assert!(bytes::show_bytes(&unknown.to_string()).contains("unknown file option '\\xffast'"), "{unknown}");
    // Characters of the escape block itself are text like any other.
    let name = "k\u{10FF80}";
    let spec = bytes::with_byte_paths(format!("-format=size:10 -field=name:{name},size:2 -key={name}").as_bytes(), parse_spec).unwrap();
    assert_eq!(spec.keys[0].field.as_deref(), Some(name));

    // A -specification file, named by bytes, may name paths by bytes too.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(std::ffi::OsStr::from_bytes(b"spec\xff"));
    std::fs::write(&file, b"-format=size:10\n-temp=/u\xfe\n").unwrap();
    let mut given = b"-spec=".to_vec();
    given.extend_from_slice(file.as_os_str().as_bytes());
    let spec = bytes::with_byte_paths(&given, parse_spec).unwrap();
    assert_eq!(paths(&spec.temp_dirs), [b"/u\xfe".to_vec()]);

    // Without the bytes entry point a path is its characters, those of the escape block included.
    assert_eq!(ok("-temp=/t\u{10FFFF}").temp_dirs[0].path, PathBuf::from("/t\u{10FFFF}"));
}
