"""Getting rating data into and out of a study.

- `importer.import_file`: CSV/TSV/JSONL in the pairs, CSMD, long and wide shapes, all or
  nothing, streaming (readers -> plan -> rows -> store), with an `ImportReport`;
- `exporters.export_study`: items with mean ratings and metric columns, or per-rater ratings;
- `info.study_info`: a summary from COUNT queries;
- `demo.build_demo_study`: the illustrative demo study.

The item and source-group keys every part of the program shares live in
`meaningbench.core.keys`. Nothing is imported here.
"""
