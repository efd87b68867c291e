pub mod pcapng;
