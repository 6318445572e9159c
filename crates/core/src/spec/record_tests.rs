//! Unit tests of the statements beyond keys: separated records, conditions and selection, derived
//! fields, `-reformat` and `-merge` as the parser resolves them, and their errors.

use super::written_tests::{err, ok};
use super::*;
use crate::select::{Place, Rec};

#[test]
fn separated_fields_are_columns_and_positions_are_column_numbers() {
    let s = ok("-format=separator:tab -field=name:a -field=name:n,integer,maximum_size:9 -key=n -key=position:1,descending");
    assert_eq!((s.record_delimiter, s.separator), (Some(b'\n'), Some(b'\t')));
    assert_eq!(
        s.fields.iter().map(|f| (f.delimiter, f.field_type)).collect::<Vec<_>>(),
        vec![(Some(b'\t'), FieldType::Character), (Some(b'\t'), FieldType::Decimal)]
    );
    let (sep, keys) = mapping::line_keys(&s, b'\n').unwrap();
    assert_eq!(sep, Some(b'\t'));
    assert_eq!(keys.len(), 2);
    assert!(err("-field=name:a,size:2 -format=separator:comma").contains("must come before the -field"));
    assert!(err("-format=separator:comma -field=name:a,size:4").contains("they take a name, a type and maximum_size"));
    assert!(err("-format=separator:comma -field=name:a,float").contains("not float"));
    assert!(err("-format=separator:comma,delimiter:comma").contains("cannot be the delimiter"));
    assert!(err("-format=size:10 -field=name:a,size:4,maximum_size:4").contains("maximum_size applies to the fields of separated"));
    assert_eq!(ok("-format=maximum_size:100").record_delimiter, Some(b'\n'));
}

#[test]
fn conditions_span_blanks_and_lines_inside_parentheses() {
    let s = ok("-format=separator:comma -field=name:a -field=name:n,decimal\n\
                -condition=name:big, test:(n gt 10 and\n  a ne 'x y')  # a comment\n-include=big");
    let sel = s.selection.expect("a selection");
    assert!(sel.keeps(Rec::plain(b"z,11")) && !sel.keeps(Rec::plain(b"x y,11")) && !sel.keeps(Rec::plain(b"z,10")));
    assert!(err("-format=size:4 -field=name:a,size:4 -condition=name:c -include=c").contains("needs a name and a test"));
    assert!(err("-format=size:4 -field=name:a,size:4 -condition=name:c,test:(a eq 'x') -include=c -condition=name:c,test:(a eq 'y')")
        .contains("a condition named 'c' is already defined"));
    assert!(err("-format=size:4 -field=name:a,size:4 -condition=name:c,test:(a eq 'x'),name:d").contains("given twice"));
}

#[test]
fn derived_fields_and_reformat_rewrite_the_layout() {
    let s = ok("-format=size:8 -field=name:a,int,size:4,big_endian -field=name:b,int,size:4,big_endian \
                -derived=name:sum,int,size:8,big_endian,value:(a + b) -reformat=sum,a -key=sum,descending");
    assert_eq!((s.record_size, s.input_record_size), (Some(12), Some(8)));
    let r = s.reformat.as_ref().unwrap();
    assert_eq!(r.pieces, vec![Place::Derived(0), Place::Bytes { offset: 0, size: 4 }]);
    assert_eq!((s.keys[0].offset, s.keys[0].size, s.keys[0].descending), (0, 8, true));
    let d = s.derivation.as_ref().unwrap();
    let mut out = vec![Vec::new()];
    d.compute(&[0, 0, 0, 7, 0xff, 0xff, 0xff, 0xfe], &mut out).unwrap();
    assert_eq!(out[0], 5i64.to_be_bytes());
    assert!(err("-format=size:4 -field=name:a,int -derived=name:d,int,value:(a * 2) -key=d").contains("needs -reformat"));
    assert!(err("-format=size:4 -field=name:a,int -derived=name:d,int,value:('x')").contains("is text"));
    assert!(err("-format=size:4 -field=name:a,size:4 -derived=name:d,size:2,value:(a + 1)").contains("arithmetic and numbers take numeric"));
    assert!(err("-format=size:4 -field=name:a,int -derived=name:d,int,value:(e + 1) -derived=name:e,int,value:(a)")
        .contains("no field is named 'e'"));
    assert!(err("-format=size:4 -field=name:a,int -reformat=a,a").contains("named twice"));
    assert!(err("-format=size:4 -field=name:a,int -key=position:1,size:4 -reformat=a").contains("does not combine with -reformat"));
    assert!(err("-format=size:4 -field=name:a,int -derived=name:a,int,value:(1)").contains("already defined"));
}

#[test]
fn merge_and_the_new_keywords() {
    assert!(ok("-format=size:4 -merge").merge);
    assert!(err("-format=size:4 -merge=1").contains("takes no value"));
    assert_eq!(ok("-in=/a").in_files.len(), 1, "-in stays -in_file beside -include");
    assert!(is_statement("-mem=1g") && is_statement("-in") && is_statement("-stat") && is_statement("-omit=(a)"));
    assert!(!is_statement("-k1") && !is_statement("-nr") && !is_statement("-o") && !is_statement("--spec") && !is_statement("-k"));
}

#[test]
fn compare_names_a_declared_function_for_fixed_records_only() {
    let id = crate::key::custom::declare_comparison("spec_test_order", std::sync::Arc::new(|a: &[u8], b: &[u8]| Ok(b.cmp(a)))).unwrap();
    let s = ok("-format=size:12 -field:name=v,size=4,off=2,compare=spec_test_order -key:v -key=position:1,size:2,compare:spec_test_order");
    assert_eq!((s.fields[0].compare, s.keys[0].compare, s.keys[1].compare), (Some(id), Some(id), Some(id)));
    let parts = mapping::record_keys(&s);
    assert_eq!(parts[0], crate::key::KeyPart::typed(2, 4, crate::key::KeyType::Custom(id), false));
    assert_eq!(parts[1], crate::key::KeyPart::typed(0, 2, crate::key::KeyType::Custom(id), false));
    assert!(err("-format=size:12 -key=position:1,size:2,compare:undeclared_one").contains("no comparison function named 'undeclared_one'"));
    let fixed_only = "compare=NAME applies to the fields and keys of fixed-size records";
    assert!(err("-format=separator:comma -field=name:a,compare:spec_test_order").contains(fixed_only));
    assert!(err("-format=delimiter:newline -field=name:a,delimiter:comma,compare:spec_test_order").contains(fixed_only));
    assert!(err("-format=delimiter:newline -key=position:1,size:2,compare:spec_test_order")
        .contains("applies to the keys of fixed-size records"));
}
