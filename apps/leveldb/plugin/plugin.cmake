# Included by apps/leveldb/programs/CMakeLists.txt before the leveldb_plugin
# target is made (apps/leveldb/README.md, "Plugin interface").  Every
# plugin/*.cc is a source (the default); the plugin wraps seven functions,
# by their (mangled) names as g++ 12 spells them:
#   leveldb::Version::Get                 the scope: the function the graph describes
#   leveldb::Table::Open                  an open table: its block cache id
#   leveldb::ReadBlock                    inside Table::Open: the index and filter blocks the Table keeps
#   leveldb::Table::~Table                a table closed: the plugin forgets it first
#   leveldb::TableFileName                the number of the table file TableCache opens next
#   pread, close                          the descriptor Table::Open reads (util/env_posix.cc)
list(APPEND LEVELDB_PLUGIN_WRAP_SYMBOLS
  _ZN7leveldb5Table4OpenERKNS_7OptionsEPNS_16RandomAccessFileEmPPS0_
  _ZN7leveldb9ReadBlockEPNS_16RandomAccessFileERKNS_11ReadOptionsERKNS_11BlockHandleEPNS_13BlockContentsE
  _ZN7leveldb5TableD1Ev
  _ZN7leveldb13TableFileNameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEm
  pread
  close)
