# Included by apps/leveldb/programs/CMakeLists.txt before the leveldb_plugin
# target is made (apps/leveldb/README.md, "Plugin interface").  Every
# plugin/*.cc is a source (the default); the plugin wraps six functions,
# by their (mangled) names as g++ 12 spells them:
#   leveldb::Version::Get                 the scope: the function the graph describes
#   leveldb::DB::Open                     database names and filter policies
#   leveldb::VersionSet::LogAndApply      a new Version is installed
#   leveldb::Table::Open                  each table's block cache id
#   open, close                           the descriptors of table files (util/env_posix.cc)
list(APPEND LEVELDB_PLUGIN_WRAP_SYMBOLS
  _ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_
  _ZN7leveldb10VersionSet11LogAndApplyEPNS_11VersionEditEPNS_4port5MutexE
  _ZN7leveldb5Table4OpenERKNS_7OptionsEPNS_16RandomAccessFileEmPPS0_
  open
  close)
