// The one translation unit that compiles Asio, Asio SSL and Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are PUBLIC
// on prism_e2b, so every TU of a program agrees on the mode).
#if defined(BOOST_ASIO_SEPARATE_COMPILATION)
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#endif
#if defined(BOOST_BEAST_SEPARATE_COMPILATION)
#include <boost/beast/src.hpp>
#endif
